// startCoalescing / endCoalescing: one Work for the operations issued in between.
#include <atomic>

#include "backend.h"
#include "cuda_path.h"
#include "errors.h"

namespace weft_torch {
namespace {

// weft's group calls are per thread: a batch of one process group inside another's
// would be issued by the outer one's end, after the inner one's Work had completed.
thread_local bool t_in_batch = false;

}  // namespace

void WeftBackend::startCoalescing() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  TORCH_CHECK(!coalescing_, "weft startCoalescing: rank ", rank_,
              " is already coalescing (call endCoalescing first)");
  TORCH_CHECK(!t_in_batch, "weft startCoalescing: rank ", rank_, ": this thread is inside "
              "another weft process group's coalesced batch (end it first)");
  Check(weftGroupStart(), "startCoalescing (weftGroupStart)", nullptr);
  t_in_batch = true;
  coalescing_ = true;
  coalesced_.clear();
  coalesced_device_.reset();
  coalesced_after_.clear();
}

c10::intrusive_ptr<c10d::Work> WeftBackend::endCoalescing() {
  std::vector<c10::intrusive_ptr<WeftWork>> works;
  std::optional<c10::Device> device;
  std::vector<std::function<void()>> after;
  weftResult_t ended = weftSuccess;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    TORCH_CHECK(coalescing_, "weft endCoalescing: rank ", rank_,
                " has no startCoalescing to end");
    TORCH_CHECK(t_in_batch, "weft endCoalescing: rank ", rank_,
                ": the batch was started on another thread (weft's group calls are per thread)");
    coalescing_ = false;
    t_in_batch = false;
    works.swap(coalesced_);
    device.swap(coalesced_device_);
    after.swap(coalesced_after_);
    // Issues the CUDA members' stream calls (and, by default, waits for them, as each
    // stream call does outside a batch); nothing to issue for CPU members.
    ended = weftGroupEnd();
  }
  std::vector<at::Tensor> outputs;
  for (auto& w : works) {
    for (at::Tensor& t : w->result()) outputs.push_back(t);
  }
  if (device && device->is_cuda()) {
    // As a failed stream call is reported by its op (LaunchOnStream).
    if (ended != weftSuccess) {
      std::exception_ptr failure;
      try {
        Check(ended, "endCoalescing (weftGroupEnd)", nullptr);
      } catch (...) {
        failure = std::current_exception();
      }
      for (auto& w : works) w->Complete(failure);
      std::rethrow_exception(failure);
    }
    // Every member is on the current stream of `device` now: what follows each, then
    // the batch's Work, an end event on that stream.
    c10::intrusive_ptr<c10d::Work> all;
    OnCurrentStream(*device, [&](weftStream_t) {
      for (auto& fn : after) fn();
      all = CompletedCudaWork(rank_, c10d::OpType::COALESCED, std::move(outputs), *device);
    });
    return all;
  }
  Check(ended, "endCoalescing (weftGroupEnd)", nullptr);
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
