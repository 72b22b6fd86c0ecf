// Creating and destroying the backend: rendezvous through torch's store, then weft.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "backend.h"
#include "errors.h"

namespace weft_torch {
namespace {

// The keyed hooks' bookkeeping (abort and completion hooks), under the caller's lock:
// an empty hook or a taken id is refused, as is removing an id nobody registered.
template <typename Hook>
void AddHook(std::map<int64_t, Hook>& hooks, int64_t id, Hook hook, int rank, const char* api) {
  TORCH_CHECK(hook, "weft ", api, ": rank ", rank, ": hook ", id, " is empty");
  TORCH_CHECK(hooks.emplace(id, std::move(hook)).second, "weft ", api, ": rank ", rank,
              ": hook id ", id, " is already registered");
}
template <typename Hook>
void RemoveHook(std::map<int64_t, Hook>& hooks, int64_t id, int rank, const char* api) {
  TORCH_CHECK(hooks.erase(id) == 1, "weft ", api, ": rank ", rank, ": no hook with id ", id);
}

// One key per process group: torch hands each group its own prefixed store.
constexpr const char* kUniqueIdKey = "weft/unique_id";

// torch fills in a group timeout whether or not the user passed one (30 minutes by
// default), so it cannot tell a chosen value from the default: WEFT_TIMEOUT, which only
// a user sets, wins over it. Timeouts given later (an operation's options, setTimeout)
// are explicit, and win over WEFT_TIMEOUT.
int64_t InitTimeoutMs(std::chrono::milliseconds timeout) {
  if (std::getenv("WEFT_TIMEOUT") != nullptr || timeout.count() <= 0) return 0;
  return static_cast<int64_t>(timeout.count());
}

}  // namespace

WeftBackend::WeftBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout, const std::string& name)
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
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.timeout_ms = InitTimeoutMs(timeout);
  name_ = name;
  config.name = name.empty() ? nullptr : name.c_str();
  Check(weftCommInitRankConfig(&comm_, size, id, rank, &config), "init (weftCommInitRankConfig)",
        nullptr);
  Check(weftCommGetTimeout(comm_, &comm_timeout_ms_), "init (weftCommGetTimeout)", comm_);
  default_timeout_ms_ = comm_timeout_ms_;
  completer_ = std::make_shared<Completer>(comm_);
}

WeftBackend::WeftBackend(AwaitReconfigure, int rank, int size, std::chrono::milliseconds timeout,
                         std::string name)
    : c10d::Backend(rank, size),
      timeout_(timeout),
      name_(std::move(name)),
      not_formed_("created with enable_reconfigure=True: call reconfigure() to form its "
                  "communicator first") {
  // What the communicator would get at init: torch's group timeout, unless WEFT_TIMEOUT
  // wins (InitTimeoutMs); every reconfigure's communicator then runs its operations with it.
  int64_t ms = InitTimeoutMs(timeout);
  if (ms == 0) {
    uint64_t weft_default = 0;
    Check(weftGetDefaultTimeout(&weft_default), "init (weftGetDefaultTimeout)", nullptr);
    ms = static_cast<int64_t>(weft_default);
  }
  default_timeout_ms_ = static_cast<uint64_t>(ms);
}

WeftBackend::WeftBackend(weftComm_t comm, int rank, int size, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), timeout_(timeout), comm_(comm) {
  Check(weftCommGetTimeout(comm_, &comm_timeout_ms_), "weftCommGetTimeout", comm_);
  default_timeout_ms_ =
      timeout.count() > 0 ? static_cast<uint64_t>(timeout.count()) : comm_timeout_ms_;
  completer_ = std::make_shared<Completer>(comm_);
}

void WeftBackend::setTimeout(std::chrono::milliseconds timeout) {
  TORCH_CHECK_VALUE(timeout.count() > 0, "weft set_timeout: rank ", rank_,
                    ": the timeout must be positive (got ", timeout.count(), " ms)");
  std::lock_guard<std::mutex> lock(issue_mu_);
  // Applied to comm_ when the next operation is issued (ApplyTimeout).
  default_timeout_ms_ = static_cast<uint64_t>(timeout.count());
}

void WeftBackend::addEphemeralTimeout(const std::chrono::milliseconds& timeout) {
  TORCH_CHECK_VALUE(timeout.count() >= 0, "weft _add_ephemeral_timeout: rank ", rank_,
                    ": the extension must not be negative (got ", timeout.count(), " ms)");
  if (timeout.count() == 0) return;
  std::lock_guard<std::mutex> lock(issue_mu_);
  ephemeral_.push_back(Ephemeral{static_cast<uint64_t>(timeout.count()), std::nullopt});
}

std::function<void()> WeftBackend::AbortHooksFn() {
  c10::weak_intrusive_ptr<WeftBackend> weak(
      c10::intrusive_ptr<WeftBackend>::unsafe_reclaim_from_nonowning(this));
  return [weak] {
    if (c10::intrusive_ptr<WeftBackend> backend = weak.lock()) backend->RunAbortHooks();
  };
}

void WeftBackend::registerAbortHook(int64_t hook_id, c10d::AbortHook hook) {
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    AddHook(abort_hooks_, hook_id, std::move(hook), rank_, "registerAbortHook");
  }
  // Here, not in the constructor: the weak reference needs the group to be owned already.
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (completer_) completer_->SetFirstFailure(AbortHooksFn());
}

void WeftBackend::unregisterAbortHook(int64_t hook_id) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  RemoveHook(abort_hooks_, hook_id, rank_, "unregisterAbortHook");
}

void WeftBackend::RunAbortHooks() {
  std::vector<c10d::AbortHook> hooks;
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    for (auto& [id, hook] : abort_hooks_) hooks.push_back(hook);
  }
  for (auto& hook : hooks) {
    try {
      hook();
    } catch (const std::exception& e) {
      TORCH_WARN("weft: rank ", rank_, ": an abort hook threw: ", e.what());
    }
  }
}

void WeftBackend::registerCompletionHook(int64_t hook_id, c10d::CompletionHook hook) {
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    AddHook(completion_hooks_, hook_id, std::move(hook), rank_, "registerCompletionHook");
  }
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (completer_) completer_->SetSuccessListener(CompletionHooksFn());
}

std::function<void(uint64_t)> WeftBackend::CompletionHooksFn() {
  c10::weak_intrusive_ptr<WeftBackend> weak(
      c10::intrusive_ptr<WeftBackend>::unsafe_reclaim_from_nonowning(this));
  return [weak](uint64_t key) {
    if (c10::intrusive_ptr<WeftBackend> backend = weak.lock()) backend->RunCompletionHooks(key);
  };
}

void WeftBackend::AttachHooks(Completer& completer) {
  bool abort_hooks, completion_hooks;
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    abort_hooks = !abort_hooks_.empty();
    completion_hooks = !completion_hooks_.empty();
  }
  if (abort_hooks) completer.SetFirstFailure(AbortHooksFn());
  if (completion_hooks) completer.SetSuccessListener(CompletionHooksFn());
  if (onCompletionHook_) completer.SetCompletionHook(onCompletionHook_);
}

void WeftBackend::unregisterCompletionHook(int64_t hook_id) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  RemoveHook(completion_hooks_, hook_id, rank_, "unregisterCompletionHook");
}

void WeftBackend::RunCompletionHooks(uint64_t completion_key) {
  std::vector<c10d::CompletionHook> hooks;
  {
    std::lock_guard<std::mutex> lock(hooks_mu_);
    for (auto& [id, hook] : completion_hooks_) hooks.push_back(hook);
  }
  c10d::CompletionHookArgs args;
  args.completionKey = completion_key;
  for (auto& hook : hooks) {
    try {
      hook(args);
    } catch (const std::exception& e) {
      TORCH_WARN("weft: rank ", rank_, ": a completion hook threw: ", e.what());
    }
  }
}

std::function<void()> WeftBackend::AbortGroupFn() {
  c10::weak_intrusive_ptr<WeftBackend> weak(
      c10::intrusive_ptr<WeftBackend>::unsafe_reclaim_from_nonowning(this));
  return [weak] {
    if (c10::intrusive_ptr<WeftBackend> backend = weak.lock()) backend->abort();
  };
}

WeftBackend::~WeftBackend() { shutdown(); }

c10::intrusive_ptr<c10d::Backend> WeftBackend::shrink(const std::vector<int64_t>& ranks_to_exclude,
                                                      int shrink_flags,
                                                      const c10::intrusive_ptr<Options>& opts) {
  static_assert(WEFT_SHRINK_DEFAULT == 0 && WEFT_SHRINK_ABORT == 1,
                "torch's SHRINK_DEFAULT/SHRINK_ABORT are passed through as weft's flags");
  std::vector<int> excluded(ranks_to_exclude.begin(), ranks_to_exclude.end());
  weftComm_t newcomm = nullptr;
  std::chrono::milliseconds child_timeout;
  {
    // Bounded by 2 x WEFT_TIMEOUT (weft.h); nothing else may issue on comm_ meanwhile.
    std::lock_guard<std::mutex> lock(issue_mu_);
    // The child's default: the options', else this group's (setTimeout's included).
    child_timeout = opts && opts->timeout.count() > 0
                        ? opts->timeout
                        : std::chrono::milliseconds(default_timeout_ms_);
    RequireComm("shrink");
    Check(weftCommShrink(comm_, excluded.data(), static_cast<int>(excluded.size()), &newcomm,
                         shrink_flags),
          "shrink (weftCommShrink)", comm_);
  }
  int rank = 0, size = 0;
  weftCommUserRank(newcomm, &rank);
  weftCommCount(newcomm, &size);
  return c10::make_intrusive<WeftBackend>(newcomm, rank, size, child_timeout);
}

void WeftBackend::registerOnCompletionHook(OnCompletionHook&& hook) {
  std::lock_guard<std::mutex> lock(issue_mu_);
  TORCH_CHECK(!onCompletionHook_, "weft: rank ", rank_,
              ": a completion hook is already registered on this group (one per group)");
  // Without a communicator yet (enable_reconfigure), reconfigure attaches it.
  if (!completer_ && not_formed_.empty()) RequireComm("registerOnCompletionHook");
  onCompletionHook_ = hook;  // Backend::hasHooks() reads it
  if (completer_) completer_->SetCompletionHook(std::move(hook));
}

void WeftBackend::waitForPendingWorks() {
  std::shared_ptr<Completer> completer;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    completer = completer_;
  }
  if (completer) completer->WaitPending();
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
  RunAbortHooks();  // before anything is torn down, outside the issue lock
  // The issue lock is held only while requests are issued (CPU ops are never waited on
  // under it; a CUDA op's stream calls and a CUDA batch's end wait for completion under
  // WEFT_CUDA_STREAM_WAIT=sync, bounded by WEFT_TIMEOUT), so taking it here is bounded and
  // keeps a Launch from using a freed comm_.
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (completer_) completer_->Abort();
  comm_ = nullptr;  // freed by weftCommAbort; shutdown only drains the completer now
  aborted_ = true;
}

c10d::ErrorType WeftBackend::getError() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  if (comm_ == nullptr) {
    return aborted_ || reconfigure_failed_ ? c10d::ErrorType::COMM_ERROR
                                           : c10d::ErrorType::SUCCESS;
  }
  weftResult_t failed = weftSuccess;
  Check(weftCommGetAsyncError(comm_, &failed), "getError (weftCommGetAsyncError)", comm_);
  switch (failed) {
    case weftSuccess: return c10d::ErrorType::SUCCESS;
    case weftTimeout: return c10d::ErrorType::TIMEOUT;
    case weftRemoteError: return c10d::ErrorType::REMOTE_ERROR;
    default: return c10d::ErrorType::COMM_ERROR;
  }
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
  // Named as at init, from the child's group name when torch gives one.
  std::string name = opts && !opts->group_name.empty() ? "weft:" + opts->group_name : "";
  // A new rendezvous, not weftCommSplit: that needs every parent rank to call it, and
  // torch calls split on the members only.
  return c10::make_intrusive<WeftBackend>(store, static_cast<int>(it - ranks.begin()),
                                          static_cast<int>(ranks.size()), timeout, name);
}

c10::intrusive_ptr<c10d::Backend> WeftBackend::merge(const c10::intrusive_ptr<c10d::Store>& store,
                                                     const c10::intrusive_ptr<Options>& opts,
                                                     const int& rank, const int& size) {
  TORCH_CHECK_VALUE(size > 0 && rank >= 0 && rank < size, "weft merge_remote_group: rank ",
                    rank_, " was given rank ", rank, " of a merged group of ", size,
                    " (more processes joined the store than that size)");
  auto timeout = opts ? opts->timeout : timeout_;
  std::string name = opts && !opts->group_name.empty() ? "weft:" + opts->group_name : "";
  return c10::make_intrusive<WeftBackend>(store, rank, size, timeout, name);
}

c10::intrusive_ptr<c10d::Backend> CreateWeftBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    const std::chrono::duration<float>& timeout,
                                                    const std::string& name,
                                                    bool enable_reconfigure) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  if (enable_reconfigure)
    return c10::make_intrusive<WeftBackend>(WeftBackend::AwaitReconfigure{}, rank, size, ms, name);
  return c10::make_intrusive<WeftBackend>(store, rank, size, ms, name);
}

}  // namespace weft_torch
