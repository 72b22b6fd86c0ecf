// Reference conversions for the float16/bfloat16 tests, written a different way from
// core/half.h (arithmetic on doubles, or GCC's _Float16), so that a shared mistake is
// unlikely.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace weft::testing {

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bfloat16 keeps 8 significant bits and float's exponent range. Round x to that grid
// with the FPU's ties-to-even (nearbyint), in double, where every step is exact.
inline uint16_t RefFloatToBf16(float x) {
  if (std::isnan(x)) return static_cast<uint16_t>((Bits(x) >> 16) | 0x40);  // quiet
  if (std::isinf(x) || x == 0) return static_cast<uint16_t>(Bits(x) >> 16);
  int e;
  std::frexp(static_cast<double>(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  if (e < -125) e = -125;                   // subnormals share one fixed quantum
  const double q = std::nearbyint(std::ldexp(static_cast<double>(x), 8 - e));
  // Past the largest bfloat16 this is >= 2^128 and the cast to float overflows to
  // infinity, which is the correctly rounded answer.
  const float r = static_cast<float>(std::ldexp(q, e - 8));
  return static_cast<uint16_t>(Bits(r) >> 16);
}

inline float RefBf16ToFloat(uint16_t h) { return FromBits(static_cast<uint32_t>(h) << 16); }

// The compiler's own half type: _Float16 (x86-64 GCC 12), or on aarch64, where GCC
// before 13 has no _Float16 in C++, __fp16 (IEEE format, converted by scalar FCVT).
#if defined(__aarch64__)
using RefHalf = __fp16;
#else
using RefHalf = _Float16;
#endif

inline float RefFp16ToFloat(uint16_t h) {
  RefHalf v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}

inline uint16_t RefFloatToFp16(float f) {
  const RefHalf v = static_cast<RefHalf>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}

}  // namespace weft::testing
