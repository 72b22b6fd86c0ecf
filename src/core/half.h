// IEEE binary16 (float16) and bfloat16 conversions to and from float, with
// round-to-nearest-even, infinities preserved, and NaNs quietened with their sign and
// top payload bits kept (what x86 F16C and GCC's _Float16 do, so every build gives the
// same bits). Used by the reduction kernels, tests and tools; header-only so the
// compiler can inline and vectorise.
//
// The portable conversions are written without branches (every path is computed and
// one is selected), so that a loop over an array of them auto-vectorises with plain
// SSE2; a branchy version would be scalar. When the compiler targets F16C
// (-mf16c, -march=haswell or later) the float16 conversions use the hardware
// instructions instead; both give identical bits (tests/unit/exec/half_test.cc checks
// every float16 pattern against each other and against _Float16).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>  // _cvtsh_ss / _cvtss_sh live in <f16cintrin.h>, only via here
#endif

namespace weft {

namespace half_internal {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// c ? a : b as mask arithmetic. With `?:` GCC sinks the float arithmetic feeding one
// side into a branch, and then (float ops may trap) cannot if-convert the loop, so it
// stays scalar; masks keep every path unconditional.
inline uint32_t Select(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (a & m) | (b & ~m);
}

}  // namespace half_internal

// --- bfloat16: the top 16 bits of a float ----------------------------------------

inline float Bf16ToFloat(uint16_t h) {
  return half_internal::BitsFloat(static_cast<uint32_t>(h) << 16);
}

inline uint16_t FloatToBf16(float f) {
  const uint32_t bits = half_internal::FloatBits(f);
  // Round to nearest even on bit 16: adding 0x7fff rounds halfway cases down, plus
  // one more when the kept lsb is odd. Overflow carries into the exponent, which is
  // the right answer (up to infinity).
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  // A NaN must not round into infinity (or wrap the sign): keep it, set the quiet bit.
  const uint32_t quiet_nan = (bits >> 16) | 0x40u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

// --- float16, portable ---------------------------------------------------------------

inline float Fp16ToFloatPortable(uint16_t h) {
  using half_internal::BitsFloat;
  using half_internal::FloatBits;
  using half_internal::Select;
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  // Exponent and mantissa moved to their float positions; only the exponent bias
  // differs for normal numbers (15 vs 127).
  const uint32_t em = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = em & 0x0f800000u;
  const uint32_t normal = em + ((127u - 15u) << 23);
  // Subnormal (and zero): build 2^-14 * (1 + m/1024) as a float and subtract the
  // implicit 2^-14; the result m * 2^-24 is exact, so no rounding is involved.
  const uint32_t subnormal =
      FloatBits(BitsFloat(em + ((127u - 14u) << 23)) - BitsFloat((127u - 14u) << 23));
  // Infinity and NaN: exponent all ones; a NaN gets the quiet bit like F16C does.
  const uint32_t quiet = Select((em & 0x007fffffu) != 0, 0x00400000u, 0u);
  const uint32_t infnan = em | 0x7f800000u | quiet;
  const uint32_t r = Select(exp == 0, subnormal, Select(exp == 0x0f800000u, infnan, normal));
  return BitsFloat(r | sign);
}

inline uint16_t FloatToFp16Portable(float f) {
  using half_internal::BitsFloat;
  using half_internal::FloatBits;
  using half_internal::Select;
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  // Signed so the comparisons below vectorise with SSE2 (which has no unsigned
  // compare); the sign bit is cleared, so the value is non-negative.
  const int32_t abs = static_cast<int32_t>(bits & 0x7fffffffu);

  // Normal range: rebias the exponent and round the 13 dropped bits to nearest even
  // (add 0xfff, plus one when the kept lsb is odd). A carry out of the mantissa
  // bumps the exponent, which is correct, up to infinity (0x7c00) from 65520 on.
  const uint32_t u = static_cast<uint32_t>(abs);
  const uint32_t normal =
      (u + (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is subnormal: adding 0.5f makes the float's ulp 2^-24,
  // the float16 subnormal step, so the FPU's own round-to-nearest-even does the
  // rounding; the low bits of the sum are then the float16 mantissa.
  const uint32_t subnormal = FloatBits(BitsFloat(u) + 0.5f) - FloatBits(0.5f);
  // NaN keeps its top payload bits and is made quiet; too large becomes infinity.
  const uint32_t nan = 0x7e00u | ((u >> 13) & 0x3ffu);

  uint32_t r = Select(abs < (113 << 23), subnormal, normal);
  r = Select(abs >= (143 << 23), 0x7c00u, r);  // 2^16 and up (and infinity)
  r = Select(abs > 0x7f800000, nan, r);
  return static_cast<uint16_t>(r | sign);
}

// --- float16, dispatch ---------------------------------------------------------------

inline float Fp16ToFloat(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return Fp16ToFloatPortable(h);
#endif
}

inline uint16_t FloatToFp16(float f) {
#if defined(__F16C__)
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
  return FloatToFp16Portable(f);
#endif
}

}  // namespace weft
