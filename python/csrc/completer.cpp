#include "completer.h"

#include <chrono>

#include "errors.h"

namespace weft_torch {

Completer::Completer(weftComm_t comm) : comm_(comm), thread_([this] { Loop(); }) {}

Completer::~Completer() { Drain(); }

void Completer::Push(PendingOp op) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(op));
  ++pushed_;
  cv_.notify_all();
}

void Completer::WaitPending() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = pushed_;
  cv_.wait(lock, [&] { return finished_ >= target; });
}

void Completer::SetCompletionHook(OnCompletionHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = std::move(hook);
}

void Completer::SetFirstFailure(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  first_failure_ = std::move(fn);
}

void Completer::SetSuccessListener(std::function<void(uint64_t)> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  on_success_ = std::move(fn);
}

void Completer::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void Completer::Abort() {
  std::lock_guard<std::mutex> lock(comm_mu_);
  if (comm_ != nullptr) weftCommAbort(comm_);  // frees comm_; pending requests fail soon
  comm_ = nullptr;
}

std::string Completer::Describe(const char* name, weftResult_t r) {
  std::lock_guard<std::mutex> lock(comm_mu_);
  return DescribeFailure(name, r, comm_);  // comm_ == nullptr: the thread's last error
}

void Completer::Loop() {
  int idle_polls = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    if (!queue_.front().point_to_point) {
      PendingOp op = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      WaitOrdered(op);
      Finish(op);
      lock.lock();
      idle_polls = 0;
      continue;
    }
    std::vector<PendingOp> done;
    TestPointToPoint(done);
    lock.unlock();
    for (PendingOp& op : done) Finish(op);
    if (done.empty()) {
      // Nothing finished: back off from yielding to short sleeps so that a long receive
      // does not burn a core that the ranks on this host need.
      if (++idle_polls < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(idle_polls < 1024 ? 20 : 200));
      }
    } else {
      idle_polls = 0;
    }
    lock.lock();
  }
}

void Completer::WaitOrdered(PendingOp& op) {
  for (weftRequest_t req : op.requests) {
    weftResult_t r = weftWait(req);  // frees req; bounded by WEFT_TIMEOUT
    if (r != weftSuccess && op.error.empty()) op.error = Describe(op.name, r);
  }
  op.requests.clear();
}

void Completer::TestPointToPoint(std::vector<PendingOp>& done) {
  for (auto it = queue_.begin(); it != queue_.end() && it->point_to_point;) {
    auto& reqs = it->requests;
    for (size_t i = 0; i < reqs.size();) {
      int finished = 0;
      weftResult_t r = weftTest(reqs[i], &finished);
      if (r != weftSuccess) finished = 1;  // a failed request is freed too
      if (r != weftSuccess && it->error.empty())
        it->error = Describe(it->name, r);
      if (finished) {
        reqs[i] = reqs.back();
        reqs.pop_back();
      } else {
        ++i;
      }
    }
    if (reqs.empty()) {
      done.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

void Completer::Finish(PendingOp& op) {
  if (!op.error.empty()) {
    std::function<void()> first;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first.swap(first_failure_);
    }
    if (first) first();  // before the Work fails: a waiter then sees what the hooks saw
  }
  std::exception_ptr error;
  try {
    if (!op.error.empty()) ThrowBackendError(op.error);
    if (op.on_success) op.on_success();
  } catch (...) {
    error = std::current_exception();
  }
  op.keep_alive.clear();
  op.on_success = nullptr;
  try {
    op.work->Complete(error);
  } catch (...) {
    // A Future callback threw; torch reports callback errors through the Future itself,
    // and this thread must survive to complete the operations behind this one.
  }
  OnCompletionHook hook;
  std::function<void(uint64_t)> on_success;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = hook_;
    if (!error) on_success = on_success_;
  }
  if (hook) {
    const auto now = std::chrono::steady_clock::now();
    try {
      hook(std::make_shared<c10d::WorkInfo>(op.work->retrieveOpType(), op.seq, op.issued, now,
                                            std::chrono::duration<float>(now - op.issued)));
    } catch (const std::exception& e) {
      // As ProcessGroupNCCL: a failing hook is reported and the next op still completes.
      TORCH_WARN("weft: the completion hook threw: ", e.what());
    }
  }
  if (on_success) on_success(op.work->getCompletionKey());
  op.work.reset();
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_;
  cv_.notify_all();
}

}  // namespace weft_torch
