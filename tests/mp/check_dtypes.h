// Element types as the test sees them: name, size, precision, and conversion of one
// element to and from double. float16/bfloat16 conversions are written here (not taken
// from the library) so that the test checks the library against an independent codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/weft.h"

namespace check {

struct DTypeInfo {
  weftDataType_t type;
  const char* name;
  size_t size;
  bool is_float;
  bool is_signed;
  double eps;  // unit roundoff (half an ulp at 1.0); 0 for integers
};

const DTypeInfo& Info(weftDataType_t t);
// Info(t).size, as a constant expression.
constexpr size_t SizeOf(weftDataType_t t) {
  switch (t) {
    case weftInt8:
    case weftUint8: return 1;
    case weftFloat16:
    case weftBfloat16: return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32: return 4;
    default: return 8;
  }
}
const std::vector<weftDataType_t>& AllDTypes();
bool ParseDType(const std::string& name, weftDataType_t* out);

// base[i] = v converted to `t` (round to nearest even for floats; v must be in range).
void StoreElem(weftDataType_t t, void* base, size_t i, double v);
double LoadElem(weftDataType_t t, const void* base, size_t i);
// Fills `n` elements with a value no test ever expects (NaN, or the type's minimum or
// maximum), so an element the library forgot to write is caught.
void FillSentinel(weftDataType_t t, void* base, size_t n);

// Independent IEEE binary16 / bfloat16 codecs (round to nearest even).
uint16_t DoubleToHalf(double v);
double HalfToDouble(uint16_t h);
uint16_t DoubleToBf16(double v);
double Bf16ToDouble(uint16_t h);

// The unsigned integer of an element's size: what moving and comparing bits take.
template <size_t Size>
using BitsOf = std::conditional_t<
    Size == 1, uint8_t,
    std::conditional_t<Size == 2, uint16_t, std::conditional_t<Size == 4, uint32_t, uint64_t>>>;

// Calls f(std::integral_constant<weftDataType_t, t>{}), so that a loop over a buffer's
// elements is compiled once per dtype with its load inlined (the checkers' loops run
// over every element of every case on every rank).
template <typename F>
decltype(auto) WithDType(weftDataType_t t, F&& f) {
  switch (t) {
    case weftInt8: return f(std::integral_constant<weftDataType_t, weftInt8>{});
    case weftUint8: return f(std::integral_constant<weftDataType_t, weftUint8>{});
    case weftInt32: return f(std::integral_constant<weftDataType_t, weftInt32>{});
    case weftUint32: return f(std::integral_constant<weftDataType_t, weftUint32>{});
    case weftInt64: return f(std::integral_constant<weftDataType_t, weftInt64>{});
    case weftUint64: return f(std::integral_constant<weftDataType_t, weftUint64>{});
    case weftFloat16: return f(std::integral_constant<weftDataType_t, weftFloat16>{});
    case weftBfloat16: return f(std::integral_constant<weftDataType_t, weftBfloat16>{});
    case weftFloat32: return f(std::integral_constant<weftDataType_t, weftFloat32>{});
    default: return f(std::integral_constant<weftDataType_t, weftFloat64>{});
  }
}

// LoadElem for a dtype known at compile time.
template <weftDataType_t T>
double LoadAs(const void* base, size_t i) {
  auto get = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, static_cast<const char*>(base) + i * sizeof(v), sizeof(v));
    return v;
  };
  if constexpr (T == weftInt8)
    return get(int8_t{});
  else if constexpr (T == weftUint8)
    return get(uint8_t{});
  else if constexpr (T == weftInt32)
    return get(int32_t{});
  else if constexpr (T == weftUint32)
    return get(uint32_t{});
  else if constexpr (T == weftInt64)
    return static_cast<double>(get(int64_t{}));
  else if constexpr (T == weftUint64)
    return static_cast<double>(get(uint64_t{}));
  else if constexpr (T == weftFloat16)
    return HalfToDouble(get(uint16_t{}));
  else if constexpr (T == weftBfloat16)
    return Bf16ToDouble(get(uint16_t{}));
  else if constexpr (T == weftFloat32)
    return get(float{});
  else
    return get(double{});
}

}  // namespace check
