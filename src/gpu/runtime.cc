#include "gpu/runtime.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "core/env.h"

#include <fmt/format.h>

#if WEFT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace weft::gpu {
namespace {

struct Probe {
  bool available = false;
  std::string reason;
};

const Probe& GetProbe() {
  static const Probe probe = [] {
    Probe p;
#if WEFT_HAVE_CUDA
    if (GetEnv("WEFT_CUDA").value_or("") == "0") {
      p.reason = "CUDA is switched off by WEFT_CUDA=0";
      return p;
    }
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      p.reason = fmt::format("no usable CUDA driver: cudaGetDeviceCount: {}: {}",
                             cudaGetErrorName(err), cudaGetErrorString(err));
      (void)cudaGetLastError();  // do not leave the sticky-looking error behind
    } else if (n == 0) {
      p.reason = "no CUDA device is visible (cudaGetDeviceCount = 0)";
    } else {
      p.available = true;
    }
#else
    p.reason = "weft was built without CUDA (WEFT_CUDA=OFF)";
#endif
    return p;
  }();
  return probe;
}

}  // namespace

bool Built() {
#if WEFT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool Available() { return GetProbe().available; }
std::string UnavailableReason() { return GetProbe().reason; }

PointerInfo Classify(const void* p) {
  PointerInfo info;
#if WEFT_HAVE_CUDA
  if (p == nullptr || !Available()) return info;
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return info;
  }
  if (attr.type == cudaMemoryTypeDevice) {
    info.device = true;
    info.device_id = attr.device;
  }
#else
  (void)p;
#endif
  return info;
}

int CurrentDevice() {
#if WEFT_HAVE_CUDA
  int d = -1;
  if (Available() && cudaGetDevice(&d) == cudaSuccess) return d;
#endif
  return -1;
}

Status SetDevice(int device) {
#if WEFT_HAVE_CUDA
  return CudaStatus(cudaSetDevice(device), "cudaSetDevice");
#else
  (void)device;
  return InvalidArgument(UnavailableReason());
#endif
}

#if WEFT_HAVE_CUDA
Result<void*> CreateStream() {
  if (!Available()) return InvalidArgument(UnavailableReason());
  cudaStream_t s = nullptr;
  WEFT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return static_cast<void*>(s);
}

void DestroyStream(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Status CopyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0 || dst == src) return Status::Ok();
  return CudaStatus(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)),
      "cudaMemcpyAsync");
}

Status SyncStream(void* stream, const Deadline& deadline) {
  auto s = static_cast<cudaStream_t>(stream);
  for (int spins = 0;; ++spins) {
    cudaError_t err = cudaStreamQuery(s);
    if (err == cudaSuccess) return Status::Ok();
    if (err != cudaErrorNotReady) return CudaStatus(err, "device work of the collective");
    if (deadline.expired())
      return DeadlineExceeded("device work (copies/reductions) did not finish in time");
    if (spins < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::string PciBusId(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return id;
}

bool CanAccess(const std::string& pci_bus_id) {
  int me = -1, other = -1;
  if (cudaGetDevice(&me) != cudaSuccess ||
      cudaDeviceGetByPCIBusId(&other, pci_bus_id.c_str()) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (me == other) return true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, me, other) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return can != 0;
}
#else
Result<void*> CreateStream() { return InvalidArgument(UnavailableReason()); }
void DestroyStream(void*) {}
Status CopyAsync(void*, const void*, size_t, void*) { return InvalidArgument(UnavailableReason()); }
Status SyncStream(void*, const Deadline&) { return InvalidArgument(UnavailableReason()); }
std::string PciBusId(int) { return ""; }
bool CanAccess(const std::string&) { return false; }
#endif

Status CudaStatus(int err, const char* what) {
  if (err == 0) return Status::Ok();
#if WEFT_HAVE_CUDA
  auto e = static_cast<cudaError_t>(err);
  return Status(Code::kSystemError,
                fmt::format("{}: {}: {}", what, cudaGetErrorName(e), cudaGetErrorString(e)));
#else
  return Status(Code::kSystemError, fmt::format("{}: CUDA error {}", what, err));
#endif
}

}  // namespace weft::gpu
