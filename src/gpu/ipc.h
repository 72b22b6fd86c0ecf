// Device memory of one process mapped into another on the same host (CUDA IPC, or the
// fake's memfd), so a kernel or copy reads and writes the peer's buffer directly (over
// NVLink/NVSwitch between GPUs with peer access, or within one GPU). Only memory from
// cudaMalloc (and allocators built on it, like PyTorch's caching allocator) can be
// exported; Export says so for anything else, and the caller falls back to staging
// through the host.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "gpu/device.h"

namespace weft::gpu {

Result<IpcRef> ExportIpc(const void* device_ptr);

// Peer allocations opened in this process, kept open while they are used again and
// again (opening costs far more than a collective on a small buffer). Closed when
// evicted or on destruction. Not thread-safe.
class IpcCache {
 public:
  IpcCache() = default;
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;
  ~IpcCache();
  // The peer's exported pointer, valid in this process.
  Result<void*> Open(const IpcRef& ref);

 private:
  void CloseAll();
  static constexpr size_t kMaxOpen = 256;
  std::map<std::string, void*> open_;  // handle bytes -> mapped base
};

}  // namespace weft::gpu
