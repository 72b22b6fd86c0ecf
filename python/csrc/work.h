// The Work object torch hands back for every weft operation.
//
// For CPU tensors it is completed by the backend's Completer thread (completer.h), never
// by the thread that waits on it, so that its Future completes even if nobody calls
// wait(): DDP's reducer waits on getFuture(), not on wait(). For CUDA tensors see
// CudaWork (cuda_path.cpp): completed by the issuing thread once the operation is on the
// stream, as torch's NCCL backend does.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace weft_torch {

class WeftWork : public c10d::Work {
 public:
  // `outputs` become the Future's value (a list of tensors), as gloo does. `devices`:
  // the CUDA devices of a CUDA operation (the Future then orders its callbacks and
  // value() after the streams current when it completes), empty for CPU tensors.
  WeftWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs,
           std::vector<c10::Device> devices = {});

  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;

  // Called once, by the Completer (CPU) or the issuing thread (CUDA): error == nullptr
  // for success.
  void Complete(std::exception_ptr error);

  // torch's Work.abort(). weft aborts communicators, not single operations
  // (weftCommAbort), so this aborts the whole process group, as ProcessGroupNCCL's
  // WorkNCCL::abort aborts its communicator: this operation, if not complete, and every
  // other one pending fail with weft's abort error (bounded, about 100 ms); peers' calls
  // fail naming this rank; the group is unusable afterwards. A no-op once the group is
  // gone. Any thread.
  void abort() override;
  // Set by the backend before the Work is handed out: aborts its group (holding no
  // reference that keeps the group alive).
  void SetAbortGroup(std::function<void()> abort_group) { abort_group_ = std::move(abort_group); }

  // A receive from any source: `source` is where weft writes the sender (before the
  // operation completes), and sourceRank() reads it once the Work has been waited for.
  // Other Works keep torch's sourceRank(), which refuses.
  void SetSource(std::shared_ptr<const int> source) { source_ = std::move(source); }
  int sourceRank() const override;

  // Correlates this Work with the completion hooks' CompletionHookArgs::completionKey
  // (torch's FlightRecorderHook matches the two): a process-wide counter, never reused,
  // since a hook may outlive the Work.
  uint64_t getCompletionKey() const override { return completion_key_; }

 private:
  const uint64_t completion_key_;
  std::shared_ptr<const int> source_;
  std::function<void()> abort_group_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace weft_torch
