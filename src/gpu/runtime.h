// The device as the rest of weft sees it: whether one is usable in this process, what
// kind of memory a pointer is, and the few calls the device path makes, each forwarded
// to the active device (gpu/device.h: CUDA, or the CPU fake under WEFT_FAKE_DEVICE=1).
// Every function also exists in a build without WEFT_CUDA (and then reports "no
// device"), so callers need no #ifdefs. The CUDA runtime is linked statically; the
// driver is found at run time, so a CUDA build on a machine without a GPU sees no devices.
#pragma once

#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "gpu/device.h"

namespace weft::gpu {

// Compiled with WEFT_CUDA.
bool Built();

// A device is active in this process (ActiveDevice() != nullptr). Decided once.
bool Available();
// Why Available() is false, e.g. "weft was built without CUDA (WEFT_CUDA=OFF)" or
// "no usable CUDA driver: cudaGetDeviceCount: CUDA driver version is insufficient...".
std::string UnavailableReason();

// Host memory (pageable, pinned or managed: the CPU can read it), an unknown pointer,
// or no device at all: {false, -1}. Costs about a microsecond with CUDA, nothing without.
PointerInfo Classify(const void* p);

// The device the calling thread uses; -1 without a device.
int CurrentDevice();
// Makes `device` current on the calling thread (the worker thread must do this before
// touching the device).
Status SetDevice(int device);

// A non-blocking stream on the current device (nullptr only with an error).
Result<void*> CreateStream();
void DestroyStream(void* stream);
// Any direction, host memory pageable or not.
Status CopyAsync(void* dst, const void* src, size_t bytes, void* stream);
// The multi-input reduction (Device::ReduceAsync).
Status ReduceAsync(void* out, const void* const* in, int n, size_t count, DataType dtype,
                   RedOp op, int divisor, void* stream);
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
