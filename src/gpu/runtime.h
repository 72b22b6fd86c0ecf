// The CUDA runtime as the rest of weft sees it: whether it is usable in this process,
// what kind of memory a pointer is, and CUDA errors as Status. Every function also
// exists in a build without WEFT_CUDA (and then reports "no CUDA"), so callers need no
// #ifdefs. The runtime is linked statically; the driver is found at run time, so a
// CUDA build on a machine without a GPU just sees no devices.
#pragma once

#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::gpu {

// Compiled with WEFT_CUDA.
bool Built();

// A driver loads and at least one device is visible. Decided once per process (the
// first call initialises the runtime, which costs milliseconds).
bool Available();
// Why Available() is false, e.g. "weft was built without CUDA (WEFT_CUDA=OFF)" or
// "no CUDA driver: cudaGetDeviceCount: CUDA driver version is insufficient...".
std::string UnavailableReason();

struct PointerInfo {
  bool device = false;  // device memory: only kernels and copies can touch it
  int device_id = -1;
};
// Host memory (pageable, pinned or managed: the CPU can read it), an unknown pointer,
// or no CUDA at all: {false, -1}. Costs about a microsecond with CUDA, nothing without.
PointerInfo Classify(const void* p);

// The device the calling thread uses (cudaGetDevice); -1 without CUDA.
int CurrentDevice();
// Makes `device` current on the calling thread (the worker thread must do this before
// touching the device).
Status SetDevice(int device);

// A non-blocking stream on the current device (nullptr only with an error).
Result<void*> CreateStream();
void DestroyStream(void* stream);
// cudaMemcpyAsync with cudaMemcpyDefault: any direction, host memory pageable or not.
Status CopyAsync(void* dst, const void* src, size_t bytes, void* stream);
// Waits for everything queued on `stream`, polling so the wait is bounded.
Status SyncStream(void* stream, const Deadline& deadline);
// The PCI bus id of `device` ("0000:3b:00.0"); "" on error.
std::string PciBusId(int device);
// Whether the current device can read and write memory of the device with this PCI bus
// id (the same device, or a peer with peer access); false where it is not visible here.
bool CanAccess(const std::string& pci_bus_id);

// Ok for 0 (cudaSuccess); otherwise SystemError "<what>: <cuda error name>: <string>".
Status CudaStatus(int err, const char* what);

}  // namespace weft::gpu

#define WEFT_CUDA_RETURN_IF_ERROR(expr) \
  WEFT_RETURN_IF_ERROR(::weft::gpu::CudaStatus(static_cast<int>(expr), #expr))
