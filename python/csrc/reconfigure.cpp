// torch's fault-tolerance API (enable_reconfigure, get_reconfigure_handle, reconfigure):
// a group forms a new communicator from handles its members exchanged out of band.
//
// A handle is "weft:" and a weftUniqueId made by this process, whose rendezvous store
// this process serves from then on. A reconfigure meets at the store of the first handle
// (the list's first, or the set's smallest) under weftUniqueIdDerive(first, uuid): each
// reconfigure's uuid is fresh (torch's contract), so successive communicators of one
// group meet under ids of their own, and a handle stays valid for as long as its
// process lives. No torch store is involved, so survivors can re-form a group after the
// process that served torch's store died.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <variant>

#include "backend.h"
#include "errors.h"

namespace weft_torch {
namespace {

constexpr std::string_view kHandlePrefix = "weft:";

// The members in rank order: a list as given, a set sorted (so every member, whatever
// order its set iterates in, gives each handle the same rank).
std::vector<std::string> RankOrder(const c10d::ReconfigureOptions& opts) {
  if (const auto* list = std::get_if<std::vector<c10d::ReconfigureHandle>>(&opts.handles))
    return *list;
  const auto& set = std::get<std::unordered_set<c10d::ReconfigureHandle>>(opts.handles);
  std::vector<std::string> sorted(set.begin(), set.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

weftUniqueId IdOf(const std::string& handle, int position, int rank) {
  weftUniqueId id;
  std::string_view text = std::string_view(handle).substr(kHandlePrefix.size());
  TORCH_CHECK_VALUE(text.size() < sizeof id.internal, "weft reconfigure: rank ", rank,
                    ": handle ", position, " is too long for a weft handle (", handle.size(),
                    " bytes)");
  std::memset(id.internal, 0, sizeof id.internal);
  std::memcpy(id.internal, text.data(), text.size());
  return id;
}

}  // namespace

bool WeftBackend::isInitialized() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  return comm_ != nullptr;
}

void WeftBackend::RequireComm(const char* name) {
  if (comm_ != nullptr) return;
  const std::string why = !not_formed_.empty() ? "the process group has no communicator (" +
                                                     not_formed_ + ")"
                          : aborted_ ? std::string("the process group was aborted")
                                     : std::string("the process group was shut down");
  TORCH_CHECK(false, "weft ", name, ": rank ", rank_, ": ", why);
}

c10d::ReconfigureHandle WeftBackend::get_reconfigure_handle() const {
  std::lock_guard<std::mutex> lock(handle_mu_);
  if (handle_.empty()) {
    weftUniqueId id;
    Check(weftGetUniqueId(&id), "get_reconfigure_handle (weftGetUniqueId)", nullptr);
    handle_ = std::string(kHandlePrefix) +
              std::string(id.internal, strnlen(id.internal, sizeof id.internal));
  }
  return handle_;
}

c10::intrusive_ptr<c10d::Work> WeftBackend::reconfigure(const c10d::ReconfigureOptions& opts) {
  const std::string mine = get_reconfigure_handle();
  const std::vector<std::string> members = RankOrder(opts);
  const int n = static_cast<int>(members.size());
  TORCH_CHECK_VALUE(n > 0, "weft reconfigure: rank ", rank_, ": no handles were given");
  TORCH_CHECK_VALUE(opts.hints.empty(), "weft reconfigure: rank ", rank_, ": weft takes no "
                    "hints (got '", opts.hints.begin()->first, "')");
  int new_rank = -1;
  for (int i = 0; i < n; ++i) {
    TORCH_CHECK_VALUE(members[i].compare(0, kHandlePrefix.size(), kHandlePrefix) == 0,
                      "weft reconfigure: rank ", rank_, ": handle ", i, " ('",
                      members[i].substr(0, 40), "') is not a weft handle (another backend's?)");
    for (int j = 0; j < i; ++j)
      TORCH_CHECK_VALUE(members[j] != members[i], "weft reconfigure: rank ", rank_,
                        ": handles ", j, " and ", i, " are the same process's");
    if (members[i] == mine) new_rank = i;
  }
  TORCH_CHECK_VALUE(new_rank >= 0, "weft reconfigure: rank ", rank_, ": this process's handle "
                    "is not among the ", n, " given (get_reconfigure_handle() gives it)");
  const weftUniqueId leader = IdOf(members[0], 0, rank_);
  weftUniqueId id;
  Check(weftUniqueIdDerive(&leader, static_cast<uint64_t>(opts.uuid), &id),
        "reconfigure (weftUniqueIdDerive)", nullptr);

  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.name = name_.empty() ? nullptr : name_.c_str();
  std::shared_ptr<Completer> old;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    TORCH_CHECK(!reconfiguring_, "weft reconfigure: rank ", rank_,
                ": another reconfigure of this group is in progress");
    TORCH_CHECK(!coalescing_ && !estimating_, "weft reconfigure: rank ", rank_,
                ": inside a coalesced batch or a time estimate (end it first)");
    TORCH_CHECK_VALUE(std::find(used_uuids_.begin(), used_uuids_.end(), opts.uuid) ==
                          used_uuids_.end(),
                      "weft reconfigure: rank ", rank_, ": uuid ", opts.uuid,
                      " was used before on this group (each reconfigure needs a fresh one)");
    // The reconfigure's own timeout bounds the rendezvous; operations afterwards take the
    // group's (ApplyTimeout at the next one).
    config.timeout_ms = opts.timeout ? static_cast<int64_t>(opts.timeout->count())
                                     : static_cast<int64_t>(default_timeout_ms_);
    TORCH_CHECK_VALUE(config.timeout_ms > 0, "weft reconfigure: rank ", rank_,
                      ": the timeout must be positive (got ", config.timeout_ms, " ms)");
    used_uuids_.push_back(opts.uuid);
    aborted_ = false;  // an abort() from now on is this reconfigure's (checked below)
    // The old communicator's peers may be dead: abort it (bounded) rather than destroy
    // it, and fail what is still pending on it.
    if (completer_ && comm_ != nullptr) completer_->Abort();
    old = std::move(completer_);
    comm_ = nullptr;
    reconfiguring_ = true;
    not_formed_ = "a reconfigure is forming it";
  }
  if (old) old->Drain();  // its Works fail within about 100 ms of the abort
  old.reset();

  // The rendezvous, outside the issue lock: ops issued meanwhile fail at once (no
  // communicator) instead of waiting for it.
  weftComm_t comm = nullptr;
  const weftResult_t r = weftCommInitRankConfig(&comm, n, id, new_rank, &config);
  uint64_t comm_timeout_ms = 0;
  if (r == weftSuccess) weftCommGetTimeout(comm, &comm_timeout_ms);

  std::lock_guard<std::mutex> lock(issue_mu_);
  reconfiguring_ = false;
  if (r != weftSuccess) {
    std::string what = "reconfigure (uuid " + std::to_string(opts.uuid) + ", rank " +
                       std::to_string(new_rank) + " of " + std::to_string(n) + ")";
    std::string error = DescribeFailure(what.c_str(), r, nullptr);
    not_formed_ = "the last reconfigure failed: " + error;
    reconfigure_failed_ = true;
    ThrowBackendError(error);
  }
  if (aborted_) {
    // abort() ran while the rendezvous did: the group stays aborted, and so does the
    // communicator just formed (its peers' first calls fail naming this rank).
    weftCommAbort(comm);
    not_formed_.clear();
    TORCH_CHECK(false, "weft reconfigure: rank ", rank_, ": the group was aborted while "
                "the reconfigure formed its communicator");
  }
  comm_ = comm;
  comm_timeout_ms_ = comm_timeout_ms;
  not_formed_.clear();
  aborted_ = false;
  reconfigure_failed_ = false;
  rank_ = new_rank;
  size_ = n;
  seq_ = 0;
  completer_ = std::make_shared<Completer>(comm_);
  AttachHooks(*completer_);
  auto work = c10::make_intrusive<WeftWork>(rank_, c10d::OpType::UNKNOWN, "weft:reconfigure",
                                            std::vector<at::Tensor>{});
  work->Complete(nullptr);
  return work;
}

}  // namespace weft_torch
