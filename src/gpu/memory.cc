#include "gpu/memory.h"

#include "gpu/device.h"
#include "gpu/runtime.h"

namespace weft::gpu {
namespace {

// Grow geometrically so a sweep of sizes reallocates O(log) times.
size_t Grow(size_t have, size_t want) {
  size_t n = have ? have : 4096;
  while (n < want) n *= 2;
  return n;
}

Status Allocate(MemoryKind kind, void** p, size_t n) {
  Device* d = ActiveDevice();
  if (d == nullptr) return InvalidArgument(NoDeviceReason());
  Result<void*> r = kind == MemoryKind::kDevice ? d->AllocDevice(n) : d->AllocPinned(n);
  if (!r.ok()) return r.status();
  *p = r.value();
  return Status::Ok();
}
void Free(MemoryKind kind, void* p) {
  Device* d = ActiveDevice();
  if (d == nullptr) return;
  if (kind == MemoryKind::kDevice)
    d->FreeDevice(p);
  else
    d->FreePinned(p);
}

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
