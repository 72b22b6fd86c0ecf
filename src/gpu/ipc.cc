#include "gpu/ipc.h"

#include "gpu/runtime.h"

namespace weft::gpu {

Result<IpcRef> ExportIpc(const void* device_ptr) {
  Device* d = ActiveDevice();
  if (d == nullptr) return InvalidArgument(NoDeviceReason());
  return d->ExportIpc(device_ptr);
}

IpcCache::~IpcCache() { CloseAll(); }

void IpcCache::CloseAll() {
  Device* d = ActiveDevice();
  if (d != nullptr)
    for (auto& [key, base] : open_) d->CloseIpc(base);
  open_.clear();
}

Result<void*> IpcCache::Open(const IpcRef& ref) {
  Device* d = ActiveDevice();
  if (d == nullptr) return InvalidArgument(NoDeviceReason());
  std::string key(reinterpret_cast<const char*>(ref.handle), sizeof(ref.handle));
  auto it = open_.find(key);
  if (it == open_.end()) {
    // Rare (a job cycling through many buffers): start over rather than track use.
    if (open_.size() >= kMaxOpen) CloseAll();
    WEFT_ASSIGN_OR_RETURN(void* base, d->OpenIpc(ref));
    it = open_.emplace(std::move(key), base).first;
  }
  return static_cast<void*>(static_cast<char*>(it->second) + ref.offset);
}

}  // namespace weft::gpu
