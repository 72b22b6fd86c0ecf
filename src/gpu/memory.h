// Owned device and pinned-host buffers that grow on demand and are reused between calls
// (allocation costs milliseconds; a collective should cost microseconds).
//
// A buffer that grows keeps its old allocation until destruction: cudaFree and
// cudaFreeHost synchronise the whole device, and while a collective runs, a caller's
// stream is parked behind it (gpu::StreamGate), so freeing then would wait for the very
// collective that is freeing: a deadlock. Geometric growth bounds what is kept to less
// than the final size.
#pragma once

#include <cstddef>
#include <vector>

#include "core/status.h"

namespace weft::gpu {

enum class MemoryKind { kDevice, kPinnedHost };

template <MemoryKind kKind>
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer();
  // At least `bytes` (contents not kept): device memory on the current device, or
  // page-locked host memory.
  Result<void*> Reserve(size_t bytes);

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
  std::vector<void*> retired_;
};

using DeviceBuffer = GrowingBuffer<MemoryKind::kDevice>;
using PinnedBuffer = GrowingBuffer<MemoryKind::kPinnedHost>;

}  // namespace weft::gpu
