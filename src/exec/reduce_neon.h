// AArch64 Advanced SIMD (NEON) building blocks for the reduction kernels in reduce.cc:
// one 16-byte vector type per element type, the four ops on it, and float16/bfloat16
// block conversions. Included by reduce.cc only, and only when compiling for aarch64.
//
// Every function gives the same bits as the portable loop it replaces (the generic
// kernels, tests/unit/exec/reduce_test.cc checks every dtype x op against a scalar
// reference for each variant):
// - Integer add and multiply wrap (NEON lanes are modular, like the unsigned arithmetic
//   in reduce.cc); min/max are exact.
// - Float min/max are compare + select, `b < a ? b : a` lane by lane, so a NaN in dst
//   stays and a NaN in src is ignored, as in the portable loop. FMIN/FMAX would instead
//   return NaN whenever either input is one.
// - 64-bit integer multiply has no NEON instruction; those kernels stay scalar.
// - FCVTL/FCVTN (float16 <-> float) and BFCVTN (float -> bfloat16, FEAT_BF16) round to
//   nearest-even under Linux's default FPCR (no flush-to-zero, no default NaN) and keep
//   a NaN's sign and top payload bits, quietened, as core/half.h does.
#pragma once

#if !defined(__aarch64__)
#error "reduce_neon.h is for aarch64 builds only"
#endif

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/types.h"

namespace weft::exec::neon {

// --- One vector type per element type: load, store and the four ops ------------------
// Overloads on the vector types, declared before the templates below so that their
// unqualified calls find them (NEON vector types have no associated namespace).

#define WEFT_NEON_LANES(T, V, sfx)                                   \
  inline V VLoad(const T* p) { return vld1q_##sfx(p); }              \
  inline void VStore(T* p, V v) { vst1q_##sfx(p, v); }               \
  inline V VAdd(V a, V b) { return vaddq_##sfx(a, b); }

// Integers of 8 and 32 bits: every op is one instruction.
#define WEFT_NEON_INT(T, V, sfx)                                     \
  WEFT_NEON_LANES(T, V, sfx)                                         \
  inline V VMul(V a, V b) { return vmulq_##sfx(a, b); }              \
  inline V VMin(V a, V b) { return vminq_##sfx(a, b); }              \
  inline V VMax(V a, V b) { return vmaxq_##sfx(a, b); }

// 64-bit integers and floats: min/max select on a compare. a is dst, b is src.
#define WEFT_NEON_SELECT(T, V, sfx)                                  \
  WEFT_NEON_LANES(T, V, sfx)                                         \
  inline V VMin(V a, V b) { return vbslq_##sfx(vcltq_##sfx(b, a), b, a); } \
  inline V VMax(V a, V b) { return vbslq_##sfx(vcgtq_##sfx(b, a), b, a); }

WEFT_NEON_INT(int8_t, int8x16_t, s8)
WEFT_NEON_INT(uint8_t, uint8x16_t, u8)
WEFT_NEON_INT(int32_t, int32x4_t, s32)
WEFT_NEON_INT(uint32_t, uint32x4_t, u32)
WEFT_NEON_SELECT(int64_t, int64x2_t, s64)
WEFT_NEON_SELECT(uint64_t, uint64x2_t, u64)
WEFT_NEON_SELECT(float, float32x4_t, f32)
WEFT_NEON_SELECT(double, float64x2_t, f64)
inline float32x4_t VMul(float32x4_t a, float32x4_t b) { return vmulq_f32(a, b); }
inline float64x2_t VMul(float64x2_t a, float64x2_t b) { return vmulq_f64(a, b); }

#undef WEFT_NEON_SELECT
#undef WEFT_NEON_INT
#undef WEFT_NEON_LANES

// Whether (T, op) has a vector form here; the rest keep the plain loop.
template <typename T, RedOp kOp>
constexpr bool kHasVector =
    !(std::is_integral_v<T> && sizeof(T) == 8 && kOp == RedOp::kProd) &&
    (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int32_t> ||
     std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> ||
     std::is_same_v<T, uint64_t> || std::is_same_v<T, float> || std::is_same_v<T, double>);

template <RedOp kOp, typename V>
[[gnu::always_inline]] inline V VApply(V a, V b) {
  if constexpr (kOp == RedOp::kSum || kOp == RedOp::kAvg) return VAdd(a, b);
  if constexpr (kOp == RedOp::kProd) return VMul(a, b);
  if constexpr (kOp == RedOp::kMin) return VMin(a, b);
  if constexpr (kOp == RedOp::kMax) return VMax(a, b);
}

// --- The loops ---------------------------------------------------------------------------
// Two vectors per iteration (two independent load-op-store chains keep both of a core's
// SIMD pipes busy), then one, then Op::Apply for the tail. Loads come before the store
// of the same lanes, so dst may equal a source; partial overlap is excluded by the
// ReduceFn contract.

// d[i] = op(x[i], y[i]); d may be x.
template <typename T, typename Op>
[[gnu::always_inline]] inline void ReduceInto(T* d, const T* x, const T* y, size_t n) {
  constexpr size_t kLanes = 16 / sizeof(T);
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const auto r0 = VApply<Op::kOp>(VLoad(x + i), VLoad(y + i));
    const auto r1 = VApply<Op::kOp>(VLoad(x + i + kLanes), VLoad(y + i + kLanes));
    VStore(d + i, r0);
    VStore(d + i + kLanes, r1);
  }
  for (; i + kLanes <= n; i += kLanes) VStore(d + i, VApply<Op::kOp>(VLoad(x + i), VLoad(y + i)));
  for (; i < n; ++i) d[i] = Op::Apply(x[i], y[i]);
}

// d[i] = op(d[i], s[i]).
template <typename T, typename Op>
[[gnu::always_inline]] inline void Reduce(T* d, const T* s, size_t n) {
  ReduceInto<T, Op>(d, d, s, n);
}

// --- float16 and bfloat16 blocks ---------------------------------------------------------
// Eight elements per step; the tail uses core/half.h's portable conversions, which give
// the same bits (tests/unit/exec/half_test.cc). bfloat16 has only BFCVTN here: its
// widening (a shift) and its integer rounding are loops GCC vectorises well on its own.

inline void WidenFp16(const uint16_t* s, float* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(s + i));
    vst1q_f32(d + i, vcvt_f32_f16(vget_low_f16(h)));
    vst1q_f32(d + i + 4, vcvt_high_f32_f16(h));
  }
  for (; i < n; ++i) d[i] = Fp16ToFloat(s[i]);
}

inline void NarrowFp16(const float* s, uint16_t* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(s + i)), vld1q_f32(s + i + 4));
    vst1q_u16(d + i, vreinterpretq_u16_f16(h));
  }
  for (; i < n; ++i) d[i] = FloatToFp16(s[i]);
}

// With FEAT_BF16 (Graviton3 and later, Grace): BFCVTN, four lanes per instruction.
// Callers are compiled with WEFT_TARGET_ARM_BF16 and run only where HWCAP2_BF16 is set.
// "+bf16" alone is refused by GCC 12; any CPU with FEAT_BF16 implements Armv8.2-A.
#define WEFT_TARGET_ARM_BF16 [[gnu::target("arch=armv8.2-a+bf16")]]
WEFT_TARGET_ARM_BF16 inline void NarrowBf16Bfcvt(const float* s, uint16_t* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const bfloat16x8_t lo = vcvtq_low_bf16_f32(vld1q_f32(s + i));
    vst1q_u16(d + i, vreinterpretq_u16_bf16(vcvtq_high_bf16_f32(lo, vld1q_f32(s + i + 4))));
  }
  for (; i < n; ++i) d[i] = FloatToBf16(s[i]);
}

}  // namespace weft::exec::neon
