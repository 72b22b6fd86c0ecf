// startTimeEstimate / endTimeEstimate: a weft group ended by weftGroupSimulateEnd.
#include "backend.h"
#include "errors.h"

namespace weft_torch {

void WeftBackend::startTimeEstimate() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  RequireComm("startTimeEstimate");
  TORCH_CHECK(!estimating_, "weft startTimeEstimate: rank ", rank_,
              " is already estimating (call endTimeEstimate first)");
  TORCH_CHECK(!coalescing_, "weft startTimeEstimate: rank ", rank_,
              " is inside a coalesced batch (end it first)");
  Check(weftGroupStart(), "startTimeEstimate (weftGroupStart)", nullptr);
  estimating_ = true;
}

float WeftBackend::endTimeEstimate() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  TORCH_CHECK(estimating_, "weft endTimeEstimate: rank ", rank_,
              " has no startTimeEstimate to end");
  estimating_ = false;
  double us = 0;
  Check(weftGroupSimulateEnd(&us), "endTimeEstimate (weftGroupSimulateEnd)", nullptr);
  return static_cast<float>(us);
}

void WeftBackend::RequireOutsideBatch(const char* name) {
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (estimating_) {
    estimating_ = false;  // as in Estimated: torch will not end it after a throw
    double dropped = 0;
    (void)weftGroupSimulateEnd(&dropped);
    ThrowBackendError(c10::str("weft ", name, ": rank ", rank_, " cannot estimate it (it waits "
                               "for its own operations; the time estimate is ended)"));
  }
  TORCH_CHECK(!coalescing_, "weft ", name, ": rank ", rank_, " is inside a coalesced batch, "
              "and this call waits for its own operations (end the batch first)");
}

c10::intrusive_ptr<c10d::Work> WeftBackend::Estimated(c10d::OpType type, const char* name,
                                                      const std::function<void(Issuer&)>& issue) {
  std::lock_guard<std::mutex> lock(issue_mu_);
  RequireComm(name);
  // Stream calls with no stream: inside a group they are checked and kept, never run
  // (weftGroupSimulateEnd drops them), whatever the tensors' device.
  Issuer issuer{comm_, name, nullptr, /*on_stream=*/true};
  issue(issuer);
  if (!issuer.error.empty()) {
    // torch's _time_estimator does not call endTimeEstimate when an op inside throws:
    // end the estimate here, or every later op of this group would be estimated too.
    estimating_ = false;
    double dropped = 0;
    (void)weftGroupSimulateEnd(&dropped);
    ThrowBackendError(issuer.error + " (the time estimate is ended)");
  }
  auto work = c10::make_intrusive<WeftWork>(rank_, type, nullptr, std::vector<at::Tensor>{});
  work->Complete(nullptr);
  return work;
}

}  // namespace weft_torch
