// The element types weft-bench knows, by weft name and alias, and exact reads and
// writes of element values as long double (exact for every integer type and for
// float16/bfloat16/float32/float64 values). Public API only: the library's own
// conversion code is not used, so the benchmark checks it independently.
#pragma once

#include <weft/weft.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace weftbench {

enum class Kind { kSigned, kUnsigned, kFloat };

struct DtypeInfo {
  weftDataType_t type;
  const char* name;
  size_t size;
  Kind kind;
  int precision;  // significant bits (floats; for integers, the width)
};

inline constexpr DtypeInfo kDtypes[] = {
    {weftInt8, "int8", 1, Kind::kSigned, 8},
    {weftUint8, "uint8", 1, Kind::kUnsigned, 8},
    {weftInt32, "int32", 4, Kind::kSigned, 32},
    {weftUint32, "uint32", 4, Kind::kUnsigned, 32},
    {weftInt64, "int64", 8, Kind::kSigned, 64},
    {weftUint64, "uint64", 8, Kind::kUnsigned, 64},
    {weftFloat16, "float16", 2, Kind::kFloat, 11},
    {weftBfloat16, "bfloat16", 2, Kind::kFloat, 8},
    {weftFloat32, "float32", 4, Kind::kFloat, 24},
    {weftFloat64, "float64", 8, Kind::kFloat, 53},
};

inline const DtypeInfo& Info(weftDataType_t t) { return kDtypes[static_cast<int>(t)]; }

inline std::optional<weftDataType_t> ParseDtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return d.type;
  struct Alias {
    const char* alias;
    weftDataType_t type;
  };
  // The nccl-tests spellings plus the usual short forms.
  static constexpr Alias kAliases[] = {
      {"char", weftInt8},     {"int", weftInt32},      {"uint", weftUint32},
      {"half", weftFloat16},  {"fp16", weftFloat16},   {"bf16", weftBfloat16},
      {"float", weftFloat32}, {"fp32", weftFloat32},   {"double", weftFloat64},
      {"fp64", weftFloat64},
  };
  for (const auto& a : kAliases)
    if (name == a.alias) return a.type;
  return std::nullopt;
}

inline constexpr const char* kRedOpNames[] = {"sum", "prod", "min", "max", "avg"};

inline std::optional<weftRedOp_t> ParseRedOp(std::string_view name) {
  for (int i = 0; i < weftNumOps; ++i)
    if (name == kRedOpNames[i]) return static_cast<weftRedOp_t>(i);
  return std::nullopt;
}

inline const char* RedOpName(weftRedOp_t op) { return kRedOpNames[static_cast<int>(op)]; }

namespace detail {

inline long double HalfBitsToValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const long double sign = (h & 0x8000) ? -1.0L : 1.0L;
  if (exp == 0x1f) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(static_cast<long double>(mant), -24);
  return sign * std::ldexp(static_cast<long double>(mant | 0x400), exp - 25);
}

// Only for values exactly representable as normal float16 numbers or zero (what the
// benchmark writes); anything else is a bug in the caller, caught by the round trip
// check in WriteValue.
inline uint16_t ValueToHalfBits(long double v) {
  if (v == 0) return std::signbit(v) ? 0x8000 : 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  int e;
  const long double m = std::frexp(std::fabs(v), &e);  // [0.5, 1) * 2^e
  const auto mant = static_cast<uint32_t>(std::ldexp(m, 11));  // 11 significant bits
  return static_cast<uint16_t>(sign | ((e + 14) << 10) | (mant & 0x3ff));
}

}  // namespace detail

// Reads element i of a buffer of type t.
inline long double ReadValue(weftDataType_t t, const void* base, size_t i) {
  const auto* p = static_cast<const unsigned char*>(base) + i * Info(t).size;
  auto get = [p]<typename T>(T) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return x;
  };
  switch (t) {
    case weftInt8: return get(int8_t{});
    case weftUint8: return get(uint8_t{});
    case weftInt32: return get(int32_t{});
    case weftUint32: return get(uint32_t{});
    case weftInt64: return get(int64_t{});
    case weftUint64: return get(uint64_t{});
    case weftFloat16: return detail::HalfBitsToValue(get(uint16_t{}));
    case weftBfloat16: {
      const uint32_t bits = static_cast<uint32_t>(get(uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case weftFloat32: return get(float{});
    case weftFloat64: return get(double{});
    default: return NAN;
  }
}

// Writes v, which must be exactly representable in t, as element i.
inline void WriteValue(weftDataType_t t, void* base, size_t i, long double v) {
  auto* p = static_cast<unsigned char*>(base) + i * Info(t).size;
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  switch (t) {
    case weftInt8: put(static_cast<int8_t>(v)); break;
    case weftUint8: put(static_cast<uint8_t>(v)); break;
    case weftInt32: put(static_cast<int32_t>(v)); break;
    case weftUint32: put(static_cast<uint32_t>(v)); break;
    case weftInt64: put(static_cast<int64_t>(v)); break;
    case weftUint64: put(static_cast<uint64_t>(v)); break;
    case weftFloat16: put(detail::ValueToHalfBits(v)); break;
    case weftBfloat16: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put(static_cast<uint16_t>(bits >> 16));  // exact values: no rounding needed
      break;
    }
    case weftFloat32: put(static_cast<float>(v)); break;
    case weftFloat64: put(static_cast<double>(v)); break;
    default: break;
  }
}

}  // namespace weftbench
