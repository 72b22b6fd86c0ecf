#include "gpu/cuda_device.h"

#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/env.h"
#include "gpu/runtime.h"

#if WEFT_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include "gpu/kernels.h"
#endif

namespace weft::gpu {

#if WEFT_HAVE_CUDA
namespace {

cudaStream_t S(Stream s) { return static_cast<cudaStream_t>(s); }

// A driver entry point from the driver the runtime loaded (weft does not link libcuda).
void* DriverEntry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    fn = nullptr;
  (void)cudaGetLastError();
  return fn;
}

using AddressRangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
using StreamValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// Polls `query` (cudaSuccess: done; cudaErrorNotReady: not yet) until done or `deadline`.
template <typename Query>
Status PollUntil(Query query, const Deadline& deadline, const char* what, const char* late) {
  for (int spins = 0;; ++spins) {
    cudaError_t err = query();
    if (err == cudaSuccess) return Status::Ok();
    if (err != cudaErrorNotReady) return CudaStatus(err, what);
    if (deadline.expired()) return DeadlineExceeded(late);
    if (spins < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

class CudaDevice final : public Device {
 public:
  const char* name() const override { return "cuda"; }

  PointerInfo Classify(const void* p) override {
    PointerInfo info;
    if (p == nullptr) return info;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      (void)cudaGetLastError();
      return info;
    }
    if (attr.type == cudaMemoryTypeDevice) info = {true, attr.device};
    return info;
  }
  int CurrentDevice() override {
    int d = -1;
    return cudaGetDevice(&d) == cudaSuccess ? d : -1;
  }
  Status SetDevice(int device) override {
    return CudaStatus(cudaSetDevice(device), "cudaSetDevice");
  }
  std::string PciBusId(int device) override {
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) {
      (void)cudaGetLastError();
      return "";
    }
    return id;
  }
  bool CanAccess(const std::string& pci_bus_id) override {
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

  Result<Stream> CreateStream() override {
    cudaStream_t s = nullptr;
    WEFT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return static_cast<Stream>(s);
  }
  void DestroyStream(Stream stream) override {
    if (stream != nullptr) cudaStreamDestroy(S(stream));
  }
  Status CopyAsync(void* dst, const void* src, size_t bytes, Stream stream) override {
    if (bytes == 0 || dst == src) return Status::Ok();
    return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, S(stream)),
                      "cudaMemcpyAsync");
  }
  Status ReduceAsync(void* out, const void* const* in, int n, size_t count, DataType dtype,
                     RedOp op, int divisor, Stream stream) override {
    return ReduceN(out, in, n, count, dtype, op, divisor, stream);
  }
  Status DelayAsync(int64_t microseconds, Stream stream) override {
    return SpinFor(microseconds, stream);
  }

  Status WriteFlagAsync(uint32_t* flag, uint32_t value, Stream stream) override {
    static auto fn = reinterpret_cast<StreamValueFn>(DriverEntry("cuStreamWriteValue32"));
    return StreamValue(fn, "cuStreamWriteValue32", flag, value, stream, 0);
  }
  Status WaitFlagAsync(uint32_t* flag, uint32_t value, Stream stream) override {
    static auto fn = reinterpret_cast<StreamValueFn>(DriverEntry("cuStreamWaitValue32"));
    return StreamValue(fn, "cuStreamWaitValue32", flag, value, stream, CU_STREAM_WAIT_VALUE_GEQ);
  }

  Result<Event> CreateEvent() override {
    cudaEvent_t ev = nullptr;
    WEFT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    return static_cast<Event>(ev);
  }
  void DestroyEvent(Event event) override {
    if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  Status RecordEvent(Event event, Stream stream) override {
    return CudaStatus(cudaEventRecord(static_cast<cudaEvent_t>(event), S(stream)),
                      "cudaEventRecord");
  }
  Result<bool> QueryEvent(Event event) override {
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaSuccess) return true;
    if (err == cudaErrorNotReady) return false;
    return CudaStatus(err, "cudaEventQuery");
  }
  Status StreamWaitEvent(Stream stream, Event event) override {
    return CudaStatus(cudaStreamWaitEvent(S(stream), static_cast<cudaEvent_t>(event), 0),
                      "cudaStreamWaitEvent");
  }
  Status SyncStream(Stream stream, const Deadline& deadline) override {
    return PollUntil([&] { return cudaStreamQuery(S(stream)); }, deadline,
                     "device work of the collective",
                     "device work (copies/reductions) did not finish in time");
  }

  Result<void*> AllocDevice(size_t bytes) override {
    void* p = nullptr;
    WEFT_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes));
    return p;
  }
  void FreeDevice(void* p) override { cudaFree(p); }
  Result<void*> AllocPinned(size_t bytes) override {
    void* p = nullptr;
    WEFT_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    return p;
  }
  void FreePinned(void* p) override { cudaFreeHost(p); }

  Result<IpcRef> ExportIpc(const void* device_ptr) override {
    static auto range = reinterpret_cast<AddressRangeFn>(DriverEntry("cuMemGetAddressRange"));
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
  Result<void*> OpenIpc(const IpcRef& ref) override {
    cudaIpcMemHandle_t h;
    std::memcpy(&h, ref.handle, sizeof(h));
    void* base = nullptr;
    cudaError_t err = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return Unavailable(fmt::format("cudaIpcOpenMemHandle of a peer's buffer: {}: {}",
                                     cudaGetErrorName(err), cudaGetErrorString(err)));
    }
    return base;
  }
  void CloseIpc(void* base) override { cudaIpcCloseMemHandle(base); }

 private:
  // cuStreamWriteValue32 / cuStreamWaitValue32 on the device address of pinned `flag`.
  static Status StreamValue(StreamValueFn fn, const char* name, uint32_t* flag, uint32_t value,
                            Stream stream, unsigned flags) {
    if (fn == nullptr) return Unavailable(fmt::format("the driver has no {}", name));
    void* dflag = nullptr;
    WEFT_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&dflag, flag, 0));
    CUresult r = fn(reinterpret_cast<CUstream>(S(stream)), reinterpret_cast<CUdeviceptr>(dflag),
                    value, flags);
    if (r != CUDA_SUCCESS)
      return Status(Code::kSystemError,
                    fmt::format("{} failed with CUresult {}", name, static_cast<int>(r)));
    return Status::Ok();
  }
};

}  // namespace

Device* CudaDeviceOrNull(std::string* why) {
  if (GetEnv("WEFT_CUDA").value_or("") == "0") {
    *why = "CUDA is switched off by WEFT_CUDA=0";
    return nullptr;
  }
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    *why = fmt::format("no usable CUDA driver: cudaGetDeviceCount: {}: {}", cudaGetErrorName(err),
                       cudaGetErrorString(err));
    (void)cudaGetLastError();  // do not leave the sticky-looking error behind
    return nullptr;
  }
  if (n == 0) {
    *why = "no CUDA device is visible (cudaGetDeviceCount = 0)";
    return nullptr;
  }
  static CudaDevice* device = new CudaDevice();  // lives for the process
  return device;
}

#else  // !WEFT_HAVE_CUDA

Device* CudaDeviceOrNull(std::string* why) {
  *why = "weft was built without CUDA (WEFT_CUDA=OFF)";
  return nullptr;
}

#endif

}  // namespace weft::gpu
