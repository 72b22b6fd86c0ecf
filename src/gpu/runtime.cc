#include "gpu/runtime.h"

#include <fmt/format.h>

#if WEFT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace weft::gpu {
namespace {

Status NoDevice() { return InvalidArgument(NoDeviceReason()); }

}  // namespace

bool Built() {
#if WEFT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool Available() { return ActiveDevice() != nullptr; }
std::string UnavailableReason() { return NoDeviceReason(); }

PointerInfo Classify(const void* p) {
  Device* d = ActiveDevice();
  return d != nullptr && p != nullptr ? d->Classify(p) : PointerInfo{};
}

int CurrentDevice() {
  Device* d = ActiveDevice();
  return d != nullptr ? d->CurrentDevice() : -1;
}

Status SetDevice(int device) {
  Device* d = ActiveDevice();
  return d != nullptr ? d->SetDevice(device) : NoDevice();
}

Result<void*> CreateStream() {
  Device* d = ActiveDevice();
  if (d == nullptr) return NoDevice();
  return d->CreateStream();
}

void DestroyStream(void* stream) {
  Device* d = ActiveDevice();
  if (d != nullptr && stream != nullptr) d->DestroyStream(stream);
}

Status CopyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  Device* d = ActiveDevice();
  return d != nullptr ? d->CopyAsync(dst, src, bytes, stream) : NoDevice();
}

Status ReduceAsync(void* out, const void* const* in, int n, size_t count, DataType dtype,
                   RedOp op, int divisor, void* stream) {
  Device* d = ActiveDevice();
  return d != nullptr ? d->ReduceAsync(out, in, n, count, dtype, op, divisor, stream)
                      : NoDevice();
}

Status SyncStream(void* stream, const Deadline& deadline) {
  Device* d = ActiveDevice();
  return d != nullptr ? d->SyncStream(stream, deadline) : NoDevice();
}

std::string PciBusId(int device) {
  Device* d = ActiveDevice();
  return d != nullptr ? d->PciBusId(device) : "";
}

bool CanAccess(const std::string& pci_bus_id) {
  Device* d = ActiveDevice();
  return d != nullptr && d->CanAccess(pci_bus_id);
}

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
