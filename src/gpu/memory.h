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

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  // At least `bytes` of device memory on the current device (contents not kept).
  Result<void*> Reserve(size_t bytes);

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
  std::vector<void*> retired_;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();
  // At least `bytes` of page-locked host memory (contents not kept).
  Result<void*> Reserve(size_t bytes);

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
  std::vector<void*> retired_;
};

}  // namespace weft::gpu
