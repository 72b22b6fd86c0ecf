// Creating and destroying the backend: rendezvous through torch's store, then weft.
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
    : c10d::Backend(rank, size) {
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

WeftBackend::~WeftBackend() { shutdown(); }

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

c10::intrusive_ptr<c10d::Backend> CreateWeftBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    const std::chrono::duration<float>& timeout) {
  return c10::make_intrusive<WeftBackend>(
      store, rank, size, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

}  // namespace weft_torch
