// The completion handle of a non-blocking call. The worker completes it; the caller
// waits on it or tests it. Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::comm {

class Request {
 public:
  void Complete(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(status);
    done_ = true;
    cv_.notify_all();
  }
  // Waits until complete or `deadline`; the call's own result, or DeadlineExceeded.
  Status Wait(const Deadline& deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, deadline.at(), [&] { return done_; }))
      return DeadlineExceeded("request did not complete in time");
    return status_;
  }
  bool Done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status status_;
};

}  // namespace weft::comm
