// startCoalescing / endCoalescing: one Work for the operations issued in between.
#include <atomic>

#include "backend.h"
#include "cuda_path.h"

namespace weft_torch {

void WeftBackend::startCoalescing() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  TORCH_CHECK(!coalescing_, "weft startCoalescing: rank ", rank_,
              " is already coalescing (call endCoalescing first)");
  coalescing_ = true;
  coalesced_.clear();
  coalesced_device_.reset();
}

c10::intrusive_ptr<c10d::Work> WeftBackend::endCoalescing() {
  std::vector<c10::intrusive_ptr<WeftWork>> works;
  std::optional<c10::Device> device;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    TORCH_CHECK(coalescing_, "weft endCoalescing: rank ", rank_,
                " has no startCoalescing to end");
    coalescing_ = false;
    works.swap(coalesced_);
    device.swap(coalesced_device_);
  }
  std::vector<at::Tensor> outputs;
  for (auto& w : works) {
    for (at::Tensor& t : w->result()) outputs.push_back(t);
  }
  // CUDA: every member is already queued on the current stream of `device` (and its
  // Work completed), so the batch's Work is an end event on that stream.
  if (device && device->is_cuda())
    return CompletedCudaWork(rank_, c10d::OpType::COALESCED, std::move(outputs), *device);
  auto all = c10::make_intrusive<WeftWork>(rank_, c10d::OpType::COALESCED, nullptr, outputs);
  if (works.empty()) {
    all->Complete(nullptr);
    return all;
  }
  // Completed by whichever thread finishes the last member (the completer, or this one
  // if every member is already done); the first member's error is the one reported.
  struct State {
    std::atomic<size_t> remaining;
    std::mutex mu;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>();
  state->remaining = works.size();
  for (auto& w : works) {
    w->getFuture()->addCallback([state, all](c10::ivalue::Future& f) {
      if (f.hasError()) {
        std::lock_guard<std::mutex> lock(state->mu);
        if (!state->error) state->error = f.exception_ptr();
      }
      if (--state->remaining == 0) all->Complete(state->error);
    });
  }
  return all;
}

}  // namespace weft_torch
