// The completion handle of a non-blocking call. The worker completes it; the caller
// waits on it or tests it. Thread-safe.
#pragma once

#include "core/deadline.h"
#include "core/mutex.h"
#include "core/status.h"

namespace weft::comm {

class Request {
 public:
  void Complete(Status status) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    status_ = std::move(status);
    done_ = true;
    cv_.NotifyAll();
  }
  // Waits until complete or `deadline`; the call's own result, or DeadlineExceeded.
  Status Wait(const Deadline& deadline) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!done_) {
      if (!cv_.WaitUntil(&mu_, deadline.at()) && !done_)
        return DeadlineExceeded("request did not complete in time");
    }
    return status_;
  }
  bool Done() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return done_;
  }
  Status status() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
};

}  // namespace weft::comm
