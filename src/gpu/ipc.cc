#include "gpu/ipc.h"

#include <cstring>

#include <fmt/format.h>

#include "gpu/runtime.h"

#if WEFT_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

namespace weft::gpu {

#if WEFT_HAVE_CUDA
namespace {

using AddressRangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);

AddressRangeFn GetAddressRange() {
  static AddressRangeFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<AddressRangeFn>(p);
  }();
  return fn;
}

}  // namespace

Result<IpcRef> ExportIpc(const void* device_ptr) {
  if (!Available()) return InvalidArgument(UnavailableReason());
  AddressRangeFn range = GetAddressRange();
  if (range == nullptr) return Unavailable("the driver has no cuMemGetAddressRange");
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult r = range(&base, &size, reinterpret_cast<CUdeviceptr>(device_ptr));
  if (r != CUDA_SUCCESS)
    return Unavailable(fmt::format("cuMemGetAddressRange({}) failed: CUresult {}", device_ptr,
                                   static_cast<int>(r)));
  cudaIpcMemHandle_t h;
  cudaError_t err = cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base));
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Unavailable(fmt::format(
        "buffer {} cannot be shared by CUDA IPC (cudaIpcGetMemHandle: {}); only cudaMalloc "
        "memory can",
        device_ptr, cudaGetErrorString(err)));
  }
  IpcRef ref;
  static_assert(sizeof(h) == sizeof(ref.handle));
  std::memcpy(ref.handle, &h, sizeof(h));
  ref.offset = reinterpret_cast<uint64_t>(device_ptr) - static_cast<uint64_t>(base);
  return ref;
}

IpcCache::~IpcCache() {
  for (auto& [key, base] : open_) cudaIpcCloseMemHandle(base);
}

Result<void*> IpcCache::Open(const IpcRef& ref) {
  std::string key(reinterpret_cast<const char*>(ref.handle), sizeof(ref.handle));
  auto it = open_.find(key);
  if (it == open_.end()) {
    if (open_.size() >= kMaxOpen) {
      // Rare (a job cycling through many buffers): start over rather than track use.
      for (auto& [k, base] : open_) cudaIpcCloseMemHandle(base);
      open_.clear();
    }
    cudaIpcMemHandle_t h;
    std::memcpy(&h, ref.handle, sizeof(h));
    void* base = nullptr;
    cudaError_t err = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return Unavailable(fmt::format("cudaIpcOpenMemHandle of a peer's buffer: {}: {}",
                                     cudaGetErrorName(err), cudaGetErrorString(err)));
    }
    it = open_.emplace(std::move(key), base).first;
  }
  return static_cast<void*>(static_cast<char*>(it->second) + ref.offset);
}

#else  // !WEFT_HAVE_CUDA

Result<IpcRef> ExportIpc(const void*) { return InvalidArgument(UnavailableReason()); }
IpcCache::~IpcCache() = default;
Result<void*> IpcCache::Open(const IpcRef&) { return InvalidArgument(UnavailableReason()); }

#endif

}  // namespace weft::gpu
