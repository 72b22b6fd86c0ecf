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
}  // namespace

#if WEFT_HAVE_CUDA
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
  for (void* p : retired_) cudaFree(p);
}
Result<void*> DeviceBuffer::Reserve(size_t bytes) {
  if (!Available()) return InvalidArgument(UnavailableReason());
  if (bytes <= size_ && ptr_) return ptr_;
  size_t n = Grow(size_, bytes);
  if (ptr_) retired_.push_back(ptr_);
  ptr_ = nullptr;
  size_ = 0;
  WEFT_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr_, n));
  size_ = n;
  return ptr_;
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
  for (void* p : retired_) cudaFreeHost(p);
}
Result<void*> PinnedBuffer::Reserve(size_t bytes) {
  if (!Available()) return InvalidArgument(UnavailableReason());
  if (bytes <= size_ && ptr_) return ptr_;
  size_t n = Grow(size_, bytes);
  if (ptr_) retired_.push_back(ptr_);
  ptr_ = nullptr;
  size_ = 0;
  WEFT_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&ptr_, n, cudaHostAllocPortable));
  size_ = n;
  return ptr_;
}
#else
DeviceBuffer::~DeviceBuffer() = default;
Result<void*> DeviceBuffer::Reserve(size_t) { return InvalidArgument(UnavailableReason()); }
PinnedBuffer::~PinnedBuffer() = default;
Result<void*> PinnedBuffer::Reserve(size_t) { return InvalidArgument(UnavailableReason()); }
#endif

}  // namespace weft::gpu
