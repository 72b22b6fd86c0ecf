#include "check_dtypes.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace check {
namespace {

const std::vector<DTypeInfo>& Table() {
  static const std::vector<DTypeInfo> kTable = {
      {weftInt8, "int8", SizeOf(weftInt8), false, true, 0},
      {weftUint8, "uint8", SizeOf(weftUint8), false, false, 0},
      {weftInt32, "int32", SizeOf(weftInt32), false, true, 0},
      {weftUint32, "uint32", SizeOf(weftUint32), false, false, 0},
      {weftInt64, "int64", SizeOf(weftInt64), false, true, 0},
      {weftUint64, "uint64", SizeOf(weftUint64), false, false, 0},
      {weftFloat16, "float16", SizeOf(weftFloat16), true, true, std::ldexp(1.0, -11)},
      {weftBfloat16, "bfloat16", SizeOf(weftBfloat16), true, true, std::ldexp(1.0, -8)},
      {weftFloat32, "float32", SizeOf(weftFloat32), true, true, std::ldexp(1.0, -24)},
      {weftFloat64, "float64", SizeOf(weftFloat64), true, true, std::ldexp(1.0, -53)},
  };
  return kTable;
}

template <typename T>
void Put(void* base, size_t i, T v) {
  std::memcpy(static_cast<char*>(base) + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

const DTypeInfo& Info(weftDataType_t t) { return Table().at(static_cast<size_t>(t)); }

const std::vector<weftDataType_t>& AllDTypes() {
  static const std::vector<weftDataType_t> kAll = [] {
    std::vector<weftDataType_t> v;
    for (const auto& d : Table()) v.push_back(d.type);
    return v;
  }();
  return kAll;
}

bool ParseDType(const std::string& name, weftDataType_t* out) {
  for (const auto& d : Table()) {
    if (name == d.name) {
      *out = d.type;
      return true;
    }
  }
  return false;
}

// binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. Values here are finite and
// well inside the range; overflow saturates to infinity, tiny values become subnormal.
uint16_t DoubleToHalf(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1)
  int exp = e - 1;
  if (exp < -14) {  // subnormal: multiples of 2^-24
    double m = std::nearbyint(std::ldexp(a, 24));  // default rounding: to nearest even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));  // m == 1024: min normal
  }
  double m = std::nearbyint(std::ldexp(a, 10 - exp));  // in [1024, 2048]
  if (m == 2048) {
    m = 1024;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00;
  return static_cast<uint16_t>(sign | ((exp + 15) << 10) | (static_cast<int>(m) - 1024));
}

double HalfToDouble(uint16_t h) {
  // 2^(e - 25) for each biased exponent e (2^-24 for subnormals, e = 0): exact, and a
  // table load instead of an ldexp call on the checker's per-element path.
  static const auto kScale = [] {
    std::array<double, 31> s{};
    for (int e = 0; e < 31; ++e) s[e] = std::ldexp(1.0, (e == 0 ? 1 : e) - 25);
    return s;
  }();
  double s = (h & 0x8000) ? -1.0 : 1.0;
  int exp = (h >> 10) & 0x1f;
  int frac = h & 0x3ff;
  if (exp == 0x1f) return frac ? std::numeric_limits<double>::quiet_NaN() : s * INFINITY;
  if (exp == 0) return s * frac * kScale[0];
  return s * (1024 + frac) * kScale[exp];
}

// bfloat16 is the top half of a float32; round the float32 to nearest even on bit 16.
uint16_t DoubleToBf16(double v) {
  float f = static_cast<float>(v);  // exact for the values used here (few significant bits)
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

double Bf16ToDouble(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void StoreElem(weftDataType_t t, void* base, size_t i, double v) {
  switch (t) {
    case weftInt8: return Put<int8_t>(base, i, static_cast<int8_t>(v));
    case weftUint8: return Put<uint8_t>(base, i, static_cast<uint8_t>(v));
    case weftInt32: return Put<int32_t>(base, i, static_cast<int32_t>(v));
    case weftUint32: return Put<uint32_t>(base, i, static_cast<uint32_t>(v));
    case weftInt64: return Put<int64_t>(base, i, static_cast<int64_t>(v));
    case weftUint64: return Put<uint64_t>(base, i, static_cast<uint64_t>(v));
    case weftFloat16: return Put<uint16_t>(base, i, DoubleToHalf(v));
    case weftBfloat16: return Put<uint16_t>(base, i, DoubleToBf16(v));
    case weftFloat32: return Put<float>(base, i, static_cast<float>(v));
    case weftFloat64: return Put<double>(base, i, v);
    default: break;
  }
}

double LoadElem(weftDataType_t t, const void* base, size_t i) {
  return WithDType(t, [&](auto dtype) { return LoadAs<dtype>(base, i); });
}

void FillSentinel(weftDataType_t t, void* base, size_t n) {
  const DTypeInfo& d = Info(t);
  // 0xff..: NaN for every float type, the maximum for unsigned types; 0x80..: a large
  // negative number for signed types. The test's values are all small.
  int byte = (!d.is_float && d.is_signed) ? 0x80 : 0xff;
  std::memset(base, byte, n * d.size);
}

}  // namespace check
