// torch's monitored_barrier on weft. The protocol and the error wording are gloo's
// (torch's tests match that wording): every rank but 0 sends rank 0 an "arrived"
// message and waits for a "released" one; rank 0 waits for every arrival within the
// barrier's timeout and releases the ranks only once all have arrived, so that either
// every rank passes or none does. Only rank 0 bounds its waits by the barrier's timeout:
// the others take the group's, so that rank 0, which can name the missing ranks, fails
// first and weft's failure notice ends the others' waits.
#include <c10/util/Exception.h>

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"
#include "tensors.h"

namespace weft_torch {
namespace {

// torch's p2p tags are the program's ints, in practice small and non-negative; the
// barrier's messages take the two most negative, so that they never meet a program's.
constexpr int kArrivedTag = std::numeric_limits<int>::min();
constexpr int kReleasedTag = kArrivedTag + 1;

std::string Join(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// Waits for each Work (bounded: weft fails an operation at its timeout) and returns
// the peers whose operation failed, in rank order, with the first failure's message.
std::pair<std::vector<int>, std::string> Failed(
    const std::map<int, c10::intrusive_ptr<c10d::Work>>& works) {
  std::vector<int> failed;
  std::string first_error;
  for (const auto& [peer, work] : works) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      if (failed.empty()) first_error = e.what();
      failed.push_back(peer);
    }
  }
  return {failed, first_error};
}

}  // namespace

void WeftBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  RequireOutsideBatch("monitored_barrier");
  if (size_ == 1) return;
  // One int per message, as gloo sends: the contents are not read.
  auto message = [] { return at::zeros({1}, at::kInt); };
  auto post = [this](c10d::OpType type, const at::Tensor& t, int peer, int tag,
                     Timeout timeout) {
    auto issue = [&](Issuer& is) {
      is([&](weftRequest_t* r) {
        return type == c10d::OpType::SEND
                   ? weftISendTagged(t.data_ptr(), Bytes(t), weftUint8, peer, tag, comm_, r)
                   : weftIRecvTagged(t.data_ptr(), Bytes(t), weftUint8, peer, tag, comm_, r);
      }, nullptr);
    };
    return Launch(type, "monitored_barrier", timeout, t.device(), {t}, issue, nullptr, {t},
                  /*point_to_point=*/true);
  };

  if (rank_ != 0) {
    try {
      post(c10d::OpType::SEND, message(), 0, kArrivedTag, c10d::kUnsetTimeout)->wait();
      post(c10d::OpType::RECV, message(), 0, kReleasedTag, c10d::kUnsetTimeout)->wait();
    } catch (const std::exception& e) {
      C10_THROW_ERROR(DistBackendError,
                      c10::str("weft monitored_barrier: Rank ", rank_,
                               " successfully reached monitoredBarrier, but received errors "
                               "while waiting for send/recv from rank 0 (rank 0's error names "
                               "the rank that failed): ", e.what()));
    }
    return;
  }

  Timeout timeout = opts.timeout;
  if (timeout == c10d::kUnsetTimeout) {
    std::lock_guard<std::mutex> lock(issue_mu_);
    timeout = Timeout(default_timeout_ms_);
  }
  // A timeout of 0 leaves no time to wait for anyone: gloo's message for a barrier that
  // ran out of time before it had heard from every rank.
  if (timeout.count() <= 0) {
    C10_THROW_ERROR(DistBackendError,
                    c10::str("weft monitored_barrier: Rank 0 timed out in monitoredBarrier "
                             "after ", timeout.count(), " ms, before waiting for ranks 1 to ",
                             size_ - 1));
  }
  auto fail = [&](const std::vector<int>& failed, const std::string& error,
                  const char* stage) {
    // Gloo names the first missing rank, or with wait_all_ranks every one ("Ranks").
    std::string who = wait_all_ranks ? "Ranks " + Join(failed)
                                     : "Rank " + std::to_string(failed.front());
    C10_THROW_ERROR(DistBackendError,
                    c10::str("weft monitored_barrier: [Rank 0]: ", who,
                             " failed to pass monitoredBarrier in ", timeout.count(), " ms (",
                             stage, "; the first error: ", error, ")"));
  };
  // Every arrival is waited for at once: they share one deadline, and when the first
  // wait times out weft fails the others, so the failed ones are exactly the ranks that
  // had not arrived.
  std::map<int, c10::intrusive_ptr<c10d::Work>> arrivals;
  for (int r = 1; r < size_; ++r)
    arrivals[r] = post(c10d::OpType::RECV, message(), r, kArrivedTag, timeout);
  auto [missing, error] = Failed(arrivals);
  if (!missing.empty()) fail(missing, error, "no arrival");
  std::map<int, c10::intrusive_ptr<c10d::Work>> releases;
  for (int r = 1; r < size_; ++r)
    releases[r] = post(c10d::OpType::SEND, message(), r, kReleasedTag, timeout);
  std::tie(missing, error) = Failed(releases);
  if (!missing.empty()) fail(missing, error, "arrived, but the release failed");
}

}  // namespace weft_torch
