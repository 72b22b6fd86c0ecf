// The element arithmetic of the GPU reduction kernels, written once for host and device
// so that the CPU can test exactly what the kernels compute (tests/unit/gpu) and the GPU
// check can compare device results bit for bit against a host reference.
//
// Semantics (the same as the CPU kernels in exec/reduce.cc, except where noted):
// - float16/bfloat16 are widened to float for the arithmetic. Unlike the CPU's pairwise
//   reduction, the kernels reduce all n inputs in float and round once at the end
//   (more accurate; results may differ from the CPU path in the last bit).
// - Integer sum/prod wrap around (computed in the unsigned type).
// - min/max: acc = x < acc ? x : acc, inputs in rank order (a NaN in the first input
//   stays, later NaNs are ignored, as on the CPU).
// - avg: the sum divided by the divisor once at the end (integers truncate).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/types.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define WEFT_HD __host__ __device__ __forceinline__
#else
#define WEFT_HD inline
#endif

#if !defined(__CUDA_ARCH__)
#include "core/half.h"
#endif

namespace weft::gpu {

template <DataType kDt>
struct Elem;

template <typename T, DataType kDt>
struct NativeElem {
  using Storage = T;
  using Acc = T;
  static WEFT_HD Acc Load(Storage x) { return x; }
  static WEFT_HD Storage Store(Acc x) { return x; }
};

template <> struct Elem<DataType::kInt8> : NativeElem<int8_t, DataType::kInt8> {};
template <> struct Elem<DataType::kUint8> : NativeElem<uint8_t, DataType::kUint8> {};
template <> struct Elem<DataType::kInt32> : NativeElem<int32_t, DataType::kInt32> {};
template <> struct Elem<DataType::kUint32> : NativeElem<uint32_t, DataType::kUint32> {};
template <> struct Elem<DataType::kInt64> : NativeElem<int64_t, DataType::kInt64> {};
template <> struct Elem<DataType::kUint64> : NativeElem<uint64_t, DataType::kUint64> {};
template <> struct Elem<DataType::kFloat32> : NativeElem<float, DataType::kFloat32> {};
template <> struct Elem<DataType::kFloat64> : NativeElem<double, DataType::kFloat64> {};

template <>
struct Elem<DataType::kFloat16> {
  using Storage = uint16_t;
  using Acc = float;
  static WEFT_HD Acc Load(Storage h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));
#else
    return Fp16ToFloat(h);
#endif
  }
  static WEFT_HD Storage Store(Acc f) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(f));
#else
    return FloatToFp16(f);
#endif
  }
};

template <>
struct Elem<DataType::kBfloat16> {
  using Storage = uint16_t;
  using Acc = float;
  static WEFT_HD Acc Load(Storage h) {
#if defined(__CUDA_ARCH__)
    return __bfloat162float(__ushort_as_bfloat16(h));
#else
    return Bf16ToFloat(h);
#endif
  }
  static WEFT_HD Storage Store(Acc f) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
    return FloatToBf16(f);
#endif
  }
};

// The unsigned type integer arithmetic wraps in (at least unsigned int wide).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;

template <RedOp kOp, typename A>
WEFT_HD A Combine(A acc, A x) {
  if constexpr (kOp == RedOp::kMin) {
    return x < acc ? x : acc;
  } else if constexpr (kOp == RedOp::kMax) {
    return x > acc ? x : acc;
  } else if constexpr (std::is_integral_v<A>) {
    using W = WrapType<A>;
    if constexpr (kOp == RedOp::kProd)
      return static_cast<A>(static_cast<W>(acc) * static_cast<W>(x));
    else  // sum, avg
      return static_cast<A>(static_cast<W>(acc) + static_cast<W>(x));
  } else {
    if constexpr (kOp == RedOp::kProd)
      return acc * x;
    else
      return acc + x;
  }
}

// avg: once, at the end.
template <RedOp kOp, typename A>
WEFT_HD A Finish(A acc, int divisor) {
  if constexpr (kOp == RedOp::kAvg && std::is_integral_v<A>) {
    // In 64 bits: the divisor (a rank count) may not fit the element type.
    using W = std::conditional_t<std::is_signed_v<A>, int64_t, uint64_t>;
    return static_cast<A>(static_cast<W>(acc) / static_cast<W>(divisor));
  } else if constexpr (kOp == RedOp::kAvg) {
    return acc / static_cast<A>(divisor);
  } else {
    (void)divisor;
    return acc;
  }
}

// One output element from n inputs: what the kernel computes at index i.
template <DataType kDt, RedOp kOp>
WEFT_HD typename Elem<kDt>::Storage ReduceElement(const typename Elem<kDt>::Storage* const* in,
                                                  int n, size_t i, int divisor) {
  using E = Elem<kDt>;
  typename E::Acc acc = E::Load(in[0][i]);
  for (int r = 1; r < n; ++r) acc = Combine<kOp>(acc, E::Load(in[r][i]));
  return E::Store(Finish<kOp>(acc, divisor));
}

// Host reference of one kernel launch (tests and the GPU check): out[i] for i < count,
// all n inputs in one pass.
void ReduceNHost(void* out, const void* const* in, int n, size_t count, DataType dtype, RedOp op,
                 int divisor);
// Host reference of a whole reduction as the device runs it: the launches of
// gpu/reduce_batches.h one after another, each rounding its result to the dtype (so a
// float16 sum of more than 8 inputs rounds once per batch). The CPU fake's reduction.
void ReduceBatchedHost(void* out, const void* const* in, int n, size_t count, DataType dtype,
                       RedOp op, int divisor);

}  // namespace weft::gpu
