// The Work object torch hands back for every weft operation.
//
// It is completed by the backend's Completer thread (completer.h), never by the thread
// that waits on it, so that its Future completes even if nobody calls wait(): DDP's
// reducer waits on getFuture(), not on wait().
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <vector>

namespace weft_torch {

class WeftWork : public c10d::Work {
 public:
  // `outputs` become the Future's value (a list of tensors), as gloo does.
  WeftWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs);

  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;

  // Called once, by the Completer: error == nullptr for success.
  void Complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace weft_torch
