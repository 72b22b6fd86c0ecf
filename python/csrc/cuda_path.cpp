#include "cuda_path.h"

#include <c10/util/Exception.h>

#ifdef WEFT_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace weft_torch {

#ifdef WEFT_TORCH_CUDA

namespace {

// The Work of a CUDA operation: its state is the end event on the issuing stream.
class CudaWork : public WeftWork {
 public:
  CudaWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, c10::Device device)
      : WeftWork(rank, type, nullptr, std::move(outputs), {device}), device_(device) {}

  // On the current stream of the device, right after the operation was queued there.
  void RecordEnd() { end_.record(c10::cuda::getCurrentCUDAStream(device_.index())); }

  // Non-blocking: whether the stream has passed the operation.
  bool isCompleted() override { return end_.query(); }

  // The caller's current stream waits for the operation (the host does not), as
  // torch's NCCL backend does for its Works.
  void synchronize() override {
    end_.block(c10::cuda::getCurrentCUDAStream(device_.index()));
  }

  bool wait(std::chrono::milliseconds /*timeout*/) override {
    synchronize();
    return true;
  }

 private:
  c10::Device device_;
  at::cuda::CUDAEvent end_;  // cudaEventDisableTiming
};

}  // namespace

bool CudaBuilt() { return true; }

const char* CudaMissingReason() { return ""; }

void OnCurrentStream(c10::Device device, const std::function<void(weftStream_t)>& body) {
  c10::cuda::CUDAGuard guard(device);
  c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device.index());
  // cudaStream_t and weftStream_t name the same type (CUstream_st*), weft.h.
  body(static_cast<weftStream_t>(stream.stream()));
}

void RecordOnCurrentStream(const std::vector<at::Tensor>& tensors, c10::Device device) {
  c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device.index());
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.is_cuda() && t.storage().data_ptr().get() != nullptr)
      c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), stream);
  }
}

c10::intrusive_ptr<WeftWork> PendingCudaWork(int rank, c10d::OpType type,
                                             std::vector<at::Tensor> outputs, c10::Device device) {
  return c10::make_intrusive<CudaWork>(rank, type, std::move(outputs), device);
}

void CompleteCudaWork(WeftWork& work) {
  auto& cuda = static_cast<CudaWork&>(work);
  cuda.RecordEnd();
  // The Future records its own event on the current stream, which is the one the
  // operation was queued on: callbacks (DDP's) and value() are ordered after it.
  cuda.Complete(nullptr);
}

c10::intrusive_ptr<WeftWork> CompletedCudaWork(int rank, c10d::OpType type,
                                               std::vector<at::Tensor> outputs,
                                               c10::Device device) {
  c10::cuda::CUDAGuard guard(device);
  auto work = PendingCudaWork(rank, type, std::move(outputs), device);
  CompleteCudaWork(*work);
  return work;
}

#else  // !WEFT_TORCH_CUDA

// setup.py's cuda_build() sets WEFT_TORCH_NO_CUDA_WHY to say which check failed.
#ifndef WEFT_TORCH_NO_CUDA_WHY
#define WEFT_TORCH_NO_CUDA_WHY 0
#endif

bool CudaBuilt() { return false; }

const char* CudaMissingReason() {
  switch (WEFT_TORCH_NO_CUDA_WHY) {
    case 1: return "the torch it was compiled against has no CUDA (torch.version.cuda is None)";
    case 2: return "the CUDA toolkit's headers (cuda_runtime_api.h) were not found when it was "
                   "compiled (torch.utils.cpp_extension.CUDA_HOME; set CUDA_HOME)";
    case 3: return "WEFT_TORCH_CUDA=0 was set when it was compiled";
    default: return "it was compiled without WEFT_TORCH_CUDA";
  }
}

[[noreturn]] static void NoCuda() {
  TORCH_CHECK(false, "weft: CUDA tensors are not supported by this build of weft._C: ",
              CudaMissingReason());
}

void OnCurrentStream(c10::Device, const std::function<void(weftStream_t)>&) { NoCuda(); }

void RecordOnCurrentStream(const std::vector<at::Tensor>&, c10::Device) { NoCuda(); }

c10::intrusive_ptr<WeftWork> PendingCudaWork(int, c10d::OpType, std::vector<at::Tensor>,
                                             c10::Device) {
  NoCuda();
}

void CompleteCudaWork(WeftWork&) { NoCuda(); }

c10::intrusive_ptr<WeftWork> CompletedCudaWork(int, c10d::OpType, std::vector<at::Tensor>,
                                               c10::Device) {
  NoCuda();
}

#endif  // WEFT_TORCH_CUDA

}  // namespace weft_torch
