#include "gpu/memory.h"

#include "gpu/runtime.h"

#if WEFT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace weft::gpu {
namespace {

// Grow geometrically so a sweep of sizes reallocates O(log) times.
size_t Grow(size_t have, size_t want) {
  size_t n = have ? have : 4096;
  while (n < want) n *= 2;
  return n;
}

#if WEFT_HAVE_CUDA
Status Allocate(MemoryKind kind, void** p, size_t n) {
  if (kind == MemoryKind::kDevice) return CudaStatus(cudaMalloc(p, n), "cudaMalloc");
  return CudaStatus(cudaHostAlloc(p, n, cudaHostAllocPortable), "cudaHostAlloc");
}
void Free(MemoryKind kind, void* p) {
  if (kind == MemoryKind::kDevice)
    cudaFree(p);
  else
    cudaFreeHost(p);
}
#else
Status Allocate(MemoryKind, void**, size_t) { return InvalidArgument(UnavailableReason()); }
void Free(MemoryKind, void*) {}
#endif

}  // namespace

template <MemoryKind kKind>
GrowingBuffer<kKind>::~GrowingBuffer() {
  if (ptr_) Free(kKind, ptr_);
  for (void* p : retired_) Free(kKind, p);
}

template <MemoryKind kKind>
Result<void*> GrowingBuffer<kKind>::Reserve(size_t bytes) {
  if (!Available()) return InvalidArgument(UnavailableReason());
  if (bytes <= size_ && ptr_) return ptr_;
  size_t n = Grow(size_, bytes);
  if (ptr_) retired_.push_back(ptr_);  // freed at destruction: see memory.h
  ptr_ = nullptr;
  size_ = 0;
  WEFT_RETURN_IF_ERROR(Allocate(kKind, &ptr_, n));
  size_ = n;
  return ptr_;
}

template class GrowingBuffer<MemoryKind::kDevice>;
template class GrowingBuffer<MemoryKind::kPinnedHost>;

}  // namespace weft::gpu
