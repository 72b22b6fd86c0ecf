// The reduction kernel: one template over (dtype, op), one thread per 16-byte pack of
// the output, grid-stride, every input's pack loaded before any is used (n loads in
// flight per thread). The arithmetic is gpu/reduce_math.h, shared with the host tests.
#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/kernels.h"
#include "gpu/reduce_batches.h"
#include "gpu/reduce_math.h"
#include "gpu/runtime.h"

namespace weft::gpu {
namespace {

constexpr int kThreads = 512;

struct ReduceArgs {
  void* out;
  const void* in[kMaxReduceInputs];
  int n;
  size_t count;
  int divisor;
  bool vector;  // every pointer 16-byte aligned
};

template <DataType kDt, RedOp kOp>
__global__ void __launch_bounds__(kThreads) ReduceKernel(ReduceArgs a) {
  using E = Elem<kDt>;
  using T = typename E::Storage;
  using Acc = typename E::Acc;
  constexpr int kPack = 16 / sizeof(T);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T* out = static_cast<T*>(a.out);
  size_t scalar_from = 0;
  if (a.vector) {
    const size_t packs = a.count / kPack;
    for (size_t p = tid; p < packs; p += stride) {
      uint4 v[kMaxReduceInputs];
#pragma unroll
      for (int r = 0; r < kMaxReduceInputs; ++r)
        if (r < a.n) v[r] = static_cast<const uint4*>(a.in[r])[p];
      union {
        uint4 u;
        T t[kPack];
      } res, cur;
      cur.u = v[0];
      Acc acc[kPack];
#pragma unroll
      for (int e = 0; e < kPack; ++e) acc[e] = E::Load(cur.t[e]);
#pragma unroll
      for (int r = 1; r < kMaxReduceInputs; ++r) {
        if (r < a.n) {
          cur.u = v[r];
#pragma unroll
          for (int e = 0; e < kPack; ++e) acc[e] = Combine<kOp>(acc[e], E::Load(cur.t[e]));
        }
      }
#pragma unroll
      for (int e = 0; e < kPack; ++e) res.t[e] = E::Store(Finish<kOp>(acc[e], a.divisor));
      reinterpret_cast<uint4*>(out)[p] = res.u;
    }
    scalar_from = packs * kPack;
  }
  const T* const* in = reinterpret_cast<const T* const*>(a.in);
  for (size_t i = scalar_from + tid; i < a.count; i += stride)
    out[i] = ReduceElement<kDt, kOp>(in, a.n, i, a.divisor);
}

using KernelFn = void (*)(ReduceArgs);

template <DataType kDt>
KernelFn PickOp(RedOp op) {
  switch (op) {
    case RedOp::kSum: return ReduceKernel<kDt, RedOp::kSum>;
    case RedOp::kProd: return ReduceKernel<kDt, RedOp::kProd>;
    case RedOp::kMin: return ReduceKernel<kDt, RedOp::kMin>;
    case RedOp::kMax: return ReduceKernel<kDt, RedOp::kMax>;
    case RedOp::kAvg: return ReduceKernel<kDt, RedOp::kAvg>;
  }
  return nullptr;
}

KernelFn Pick(DataType dt, RedOp op) {
  switch (dt) {
    case DataType::kInt8: return PickOp<DataType::kInt8>(op);
    case DataType::kUint8: return PickOp<DataType::kUint8>(op);
    case DataType::kInt32: return PickOp<DataType::kInt32>(op);
    case DataType::kUint32: return PickOp<DataType::kUint32>(op);
    case DataType::kInt64: return PickOp<DataType::kInt64>(op);
    case DataType::kUint64: return PickOp<DataType::kUint64>(op);
    case DataType::kFloat16: return PickOp<DataType::kFloat16>(op);
    case DataType::kBfloat16: return PickOp<DataType::kBfloat16>(op);
    case DataType::kFloat32: return PickOp<DataType::kFloat32>(op);
    case DataType::kFloat64: return PickOp<DataType::kFloat64>(op);
  }
  return nullptr;
}

int MaxBlocks() {
  // Enough resident blocks to fill every multiprocessor a few times over.
  static const int blocks = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        sms <= 0)
      sms = 80;
    return sms * 4;
  }();
  return blocks;
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

Status ReduceN(void* out, const void* const* in, int n, size_t count, DataType dtype, RedOp op,
               int divisor, void* stream) {
  if (count == 0) return Status::Ok();
  if (n < 1 || in == nullptr) return InvalidArgument("ReduceN: no inputs");
  if (Pick(dtype, op) == nullptr) return InvalidArgument("ReduceN: bad dtype or op");
  const size_t pack = 16 / DataTypeSize(dtype);
  // More inputs than one launch takes: the batches of gpu/reduce_batches.h (which also
  // keeps an in-place output from being read after a batch overwrote it).
  for (const ReduceBatch& b : PlanReduceBatches(out, in, n, op, divisor)) {
    ReduceArgs a{};
    a.out = out;
    a.n = b.n;
    for (int r = 0; r < b.n; ++r) a.in[r] = b.in[r];
    a.count = count;
    a.divisor = b.divisor;
    a.vector = Aligned16(out);
    for (int r = 0; r < a.n; ++r) a.vector = a.vector && Aligned16(a.in[r]);
    const size_t work = a.vector ? std::max<size_t>(count / pack, 1) : count;
    const int blocks =
        static_cast<int>(std::min<size_t>((work + kThreads - 1) / kThreads, MaxBlocks()));
    Pick(dtype, b.op)<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a);
    WEFT_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  }
  return Status::Ok();
}

namespace {

// One thread reading the global nanosecond timer until `ns` have passed.
__global__ void SpinKernel(int64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<int64_t>(now - start) < ns);
}

}  // namespace

Status SpinFor(int64_t microseconds, void* stream) {
  SpinKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(microseconds * 1000);
  return CudaStatus(cudaGetLastError(), "SpinKernel launch");
}

}  // namespace weft::gpu
