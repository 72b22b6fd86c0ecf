// Creating and destroying the backend: rendezvous through torch's store, then weft.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend.h"
#include "errors.h"

namespace weft_torch {
namespace {

// One key per process group: torch hands each group its own prefixed store.
constexpr const char* kUniqueIdKey = "weft/unique_id";

// weft reads WEFT_TIMEOUT when a communicator is created and has no other way to be
// given a timeout, so torch's `timeout=` is passed through the environment for the
// duration of the init (only when the user has not set WEFT_TIMEOUT, which then wins).
// A weftCommInitRankConfig(timeout) in the C API would remove this.
class TimeoutForInit {
 public:
  explicit TimeoutForInit(std::chrono::milliseconds timeout) : lock_(Mutex()) {
    if (std::getenv("WEFT_TIMEOUT") != nullptr || timeout.count() <= 0) return;
    double seconds = std::ceil(timeout.count() / 1000.0);
    setenv("WEFT_TIMEOUT", std::to_string(static_cast<long long>(seconds)).c_str(), 1);
    set_ = true;
  }
  ~TimeoutForInit() {
    if (set_) unsetenv("WEFT_TIMEOUT");
  }

 private:
  static std::mutex& Mutex() {
    static std::mutex mu;
    return mu;
  }
  std::lock_guard<std::mutex> lock_;
  bool set_ = false;
};

}  // namespace

WeftBackend::WeftBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), timeout_(timeout) {
  weftUniqueId id;
  if (rank == 0) {
    Check(weftGetUniqueId(&id), "weftGetUniqueId", nullptr);
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal));
  } else {
    std::vector<uint8_t> bytes = store->get(kUniqueIdKey);  // waits, up to the store timeout
    TORCH_CHECK(bytes.size() == sizeof id.internal, "weft: the unique id in the store has ",
                bytes.size(), " bytes, expected ", sizeof id.internal);
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  }
  {
    TimeoutForInit timeout_env(timeout);
    Check(weftCommInitRank(&comm_, size, id, rank), "init (weftCommInitRank)", nullptr);
  }
  completer_ = std::make_unique<Completer>(comm_);
}

WeftBackend::WeftBackend(weftComm_t comm, int rank, int size, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), timeout_(timeout), comm_(comm) {
  completer_ = std::make_unique<Completer>(comm_);
}

WeftBackend::~WeftBackend() { shutdown(); }

c10::intrusive_ptr<c10d::Backend> WeftBackend::shrink(const std::vector<int64_t>& ranks_to_exclude,
                                                      int shrink_flags,
                                                      const c10::intrusive_ptr<Options>& opts) {
  static_assert(WEFT_SHRINK_DEFAULT == 0 && WEFT_SHRINK_ABORT == 1,
                "torch's SHRINK_DEFAULT/SHRINK_ABORT are passed through as weft's flags");
  std::vector<int> excluded(ranks_to_exclude.begin(), ranks_to_exclude.end());
  weftComm_t newcomm = nullptr;
  {
    // Bounded by 2 x WEFT_TIMEOUT (weft.h); nothing else may issue on comm_ meanwhile.
    std::lock_guard<std::mutex> lock(issue_mu_);
    TORCH_CHECK(comm_ != nullptr, "weft shrink: rank ", rank_,
                ": the process group was shut down or aborted");
    Check(weftCommShrink(comm_, excluded.data(), static_cast<int>(excluded.size()), &newcomm,
                         shrink_flags),
          "shrink (weftCommShrink)", comm_);
  }
  int rank = 0, size = 0;
  weftCommUserRank(newcomm, &rank);
  weftCommCount(newcomm, &size);
  return c10::make_intrusive<WeftBackend>(newcomm, rank, size, opts ? opts->timeout : timeout_);
}

void WeftBackend::shutdown() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  // Everything issued completes (or fails, bounded by WEFT_TIMEOUT) before the
  // communicator it runs on goes away.
  if (completer_) completer_->Drain();
  completer_.reset();
  if (comm_ != nullptr) weftCommDestroy(comm_);
  comm_ = nullptr;
}

void WeftBackend::abort() {
  // The issue lock is held only while requests are issued (never while one is waited
  // on), so taking it here is bounded and keeps a Launch from using a freed comm_.
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (completer_) completer_->Abort();
  comm_ = nullptr;  // freed by weftCommAbort; shutdown only drains the completer now
}

c10::intrusive_ptr<c10d::Backend> WeftBackend::split(const c10::intrusive_ptr<c10d::Store>& store,
                                                     const std::vector<int>& ranks,
                                                     const c10::intrusive_ptr<Options>& opts) {
  auto it = std::find(ranks.begin(), ranks.end(), rank_);
  if (it == ranks.end()) return nullptr;
  for (int r : ranks)
    TORCH_CHECK_VALUE(r >= 0 && r < size_, "weft split: rank ", rank_, " was given rank ", r,
                      ", outside the parent group of ", size_);
  auto timeout = opts ? opts->timeout : timeout_;
  // A new rendezvous, not weftCommSplit: that needs every parent rank to call it, and
  // torch calls split on the members only.
  return c10::make_intrusive<WeftBackend>(store, static_cast<int>(it - ranks.begin()),
                                          static_cast<int>(ranks.size()), timeout);
}

c10::intrusive_ptr<c10d::Backend> CreateWeftBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    const std::chrono::duration<float>& timeout) {
  return c10::make_intrusive<WeftBackend>(
      store, rank, size, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

}  // namespace weft_torch
