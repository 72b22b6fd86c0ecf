#include "work.h"

#include <atomic>

namespace weft_torch {

namespace {
uint64_t NextCompletionKey() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

WeftWork::WeftWork(int rank, c10d::OpType type, const char* title,
                   std::vector<at::Tensor> outputs, std::vector<c10::Device> devices)
    : c10d::Work(rank, type, title),
      completion_key_(NextCompletionKey()),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::move(devices))) {}

c10::intrusive_ptr<c10::ivalue::Future> WeftWork::getFuture() { return future_; }

std::vector<at::Tensor> WeftWork::result() { return outputs_; }

int WeftWork::sourceRank() const {
  if (!source_) return c10d::Work::sourceRank();
  // Complete() ran after weft wrote it; wait() (or the Future) orders this read after both.
  TORCH_CHECK(*source_ >= 0, "weft recvAnysource: the source is known once the receive has "
              "completed (wait() for it first)");
  return *source_;
}

void WeftWork::abort() {
  if (abort_group_) abort_group_();
}

void WeftWork::Complete(std::exception_ptr error) {
  // Work first, then the Future: a Future callback (DDP's) may inspect the Work.
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace weft_torch
