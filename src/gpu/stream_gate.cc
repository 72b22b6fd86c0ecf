#include "gpu/stream_gate.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/env.h"
#include "gpu/runtime.h"

#if WEFT_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

namespace weft::gpu {

#if WEFT_HAVE_CUDA
namespace {

using WaitValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// cuStreamWaitValue32 from the driver the runtime loaded (no link against libcuda) when
// WEFT_CUDA_STREAM_WAIT=memop asks for it; nullptr (synchronous) by default.
//
// Why not the default: on an H200 (driver 580), with ranks as processes sharing the
// GPU, the multi-rank check hung with the caller's stream parked on the flag: when the
// caller then blocked in the driver (a copy into pageable memory: both paths; in
// cudaStreamSynchronize: the direct path, whose worker opens CUDA IPC handles) while the
// worker still had CUDA calls to make for the collective. The gate test (one thread, no
// such call) passed. Until the device work is enqueued on the caller's stream at call
// time (kernels that synchronise with peers through memory, NCCL's design), stream calls
// are synchronous (docs/GPU.md).
// (Since CUDA 12 the memory operations need no opt-in; the device attribute
// CAN_USE_STREAM_MEM_OPS_V1 describes the retired v1 API and reads 0 on that H200
// although the v2 calls work, so it is not consulted.)
Result<void*> FindWaitValue() {
  std::string mode = GetEnv("WEFT_CUDA_STREAM_WAIT").value_or("sync");
  if (mode == "sync") return static_cast<void*>(nullptr);
  if (mode != "memop")
    return InvalidArgument(
        fmt::format("WEFT_CUDA_STREAM_WAIT='{}': expected sync or memop", mode));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  cudaError_t err =
      cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault,
                                       &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) fn = nullptr;
  (void)cudaGetLastError();
  if (fn == nullptr)
    return InvalidArgument("WEFT_CUDA_STREAM_WAIT=memop: the driver has no cuStreamWaitValue32");
  return fn;
}

}  // namespace

Result<std::unique_ptr<StreamGate>> StreamGate::Create() {
  if (!Available()) return InvalidArgument(UnavailableReason());
  std::unique_ptr<StreamGate> gate(new StreamGate());
  void* p = nullptr;
  WEFT_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&p, kSlots * sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
  gate->flags_ = static_cast<uint32_t*>(p);
  for (uint32_t i = 0; i < kSlots; ++i) gate->flags_[i] = 0;
  WEFT_ASSIGN_OR_RETURN(gate->wait_value_fn_, FindWaitValue());
  return gate;
}

StreamGate::~StreamGate() {
  // A stream may not have reached a released wait yet (it is still busy with earlier
  // work) and would then read freed memory. Once any ticket was issued the 16 KiB of
  // flags are therefore left allocated (once per communicator that used a stream).
  if (flags_ != nullptr && issued_ == 0) cudaFreeHost(flags_);
}

const char* StreamGate::mechanism() const {
  return wait_value_fn_ != nullptr ? "stream memory operation" : "synchronous call";
}

Result<StreamGate::Ticket> StreamGate::Begin(void* stream) {
  if (issued_ - std::atomic_ref<uint64_t>(released_).load() >= kSlots - 1)
    return Unavailable(fmt::format("more than {} device operations in flight", kSlots - 1));
  Ticket t;
  const uint64_t n = issued_;
  t.slot = static_cast<uint32_t>(n % kSlots);
  t.value = static_cast<uint32_t>(n / kSlots) + 1;  // the slot's generation
  cudaEvent_t ev = nullptr;
  WEFT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  auto s = static_cast<cudaStream_t>(stream);
  cudaError_t err = cudaEventRecord(ev, s);
  if (err != cudaSuccess) {
    cudaEventDestroy(ev);
    return CudaStatus(err, "cudaEventRecord on the caller's stream");
  }
  uint32_t* flag = flags_ + t.slot;
  uint32_t* dflag = nullptr;
  WEFT_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), flag, 0));
  if (wait_value_fn_ != nullptr) {
    CUresult r = reinterpret_cast<WaitValueFn>(wait_value_fn_)(
        reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(dflag), t.value,
        CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) {
      cudaEventDestroy(ev);
      return Status(Code::kSystemError,
                    fmt::format("cuStreamWaitValue32 failed with CUresult {} (unset "
                                "WEFT_CUDA_STREAM_WAIT to make stream calls synchronous)",
                                static_cast<int>(r)));
    }
  }
  ++issued_;
  t.ready = ev;
  return t;
}

Status StreamGate::WaitReady(const Ticket& t, const Deadline& deadline) {
  auto ev = static_cast<cudaEvent_t>(t.ready);
  int spins = 0;
  while (true) {
    cudaError_t err = cudaEventQuery(ev);
    if (err == cudaSuccess) return Status::Ok();
    if (err != cudaErrorNotReady) return CudaStatus(err, "waiting for the caller's stream");
    if (deadline.expired())
      return DeadlineExceeded(
          "the caller's stream did not reach the operation in time (work queued before it "
          "on the stream is still running)");
    if (++spins < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void StreamGate::Release(const Ticket& t) {
  std::atomic_ref<uint32_t>(flags_[t.slot]).store(t.value, std::memory_order_release);
  std::atomic_ref<uint64_t>(released_).fetch_add(1);
  if (t.ready != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(t.ready));
}

#else  // !WEFT_HAVE_CUDA

Result<std::unique_ptr<StreamGate>> StreamGate::Create() {
  return InvalidArgument(UnavailableReason());
}
StreamGate::~StreamGate() = default;
const char* StreamGate::mechanism() const { return "none"; }
Result<StreamGate::Ticket> StreamGate::Begin(void*) { return InvalidArgument(UnavailableReason()); }
Status StreamGate::WaitReady(const Ticket&, const Deadline&) {
  return InvalidArgument(UnavailableReason());
}
void StreamGate::Release(const Ticket&) {}

#endif

}  // namespace weft::gpu
