#include "comm/shrink.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/rendezvous.h"
#include "bootstrap/store.h"
#include "comm/init.h"
#include "comm/shrink_codec.h"
#include "core/env.h"
#include "core/log.h"

namespace weft::comm {
namespace {

using Clock = std::chrono::steady_clock;

// How long the agreement waits for a rank that some caller's error names as lost before
// leaving it out (it is kept if it posts in time: the hint may be wrong, e.g. a tcp peer
// that aborted without its abort frame looks like one that died). Survivors learn of a
// death within ~200 ms (docs/RELIABILITY.md), so this leaves room for a loaded machine.
constexpr double kLostGraceSeconds = 2.0;
// Between polls of the others' posts: short next to the grace, light on the store.
constexpr auto kPollInterval = std::chrono::milliseconds(10);

// Why a rank is left out, as stored in the decision.
constexpr char kListed = 'x';  // in a caller's exclude list
constexpr char kLost = 'l';    // named as lost, and silent for the grace
constexpr char kSilent = 't';  // silent until WEFT_TIMEOUT

std::string PostKey(const std::string& prefix, int rank) {
  return fmt::format("{}/post/{}", prefix, rank);
}

// The agreement (see shrink.h). Every store call has its own WEFT_TIMEOUT bound; the
// waiting for silent ranks ends at `wait_until`.
Result<ShrinkDecision> Agree(bootstrap::StoreClient& store, const std::string& prefix, int rank,
                       int size, const ShrinkPost& mine, double timeout_s) {
  auto op = [&] { return Deadline::AfterSeconds(timeout_s); };
  const Clock::time_point start = Clock::now();
  const Deadline wait_until = Deadline::AfterSeconds(timeout_s);
  const Clock::time_point grace_end =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::min(kLostGraceSeconds, timeout_s)));
  const std::string decision_key = prefix + "/decision";

  WEFT_RETURN_IF_ERROR(store.Set(PostKey(prefix, rank), EncodeShrinkPost(mine), op()));
  std::map<int, char> excluded;
  for (int r : mine.listed) excluded[r] = kListed;
  std::set<int> lost(mine.lost.begin(), mine.lost.end());
  std::set<int> posted{rank};
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool decided, store.Check(decision_key, op()));
    if (decided) break;  // someone finished first: adopt theirs
    for (int q = 0; q < size; ++q) {
      if (posted.count(q) != 0 || excluded.count(q) != 0) continue;
      WEFT_ASSIGN_OR_RETURN(bool has, store.Check(PostKey(prefix, q), op()));
      if (!has) continue;
      WEFT_ASSIGN_OR_RETURN(std::string v, store.Get(PostKey(prefix, q), op()));
      auto post = DecodeShrinkPost(v, size);
      if (!post.ok()) return post.status().WithContext(fmt::format("the post of rank {}", q));
      posted.insert(q);
      for (int r : post->listed) excluded.emplace(r, kListed);  // sets only grow
      lost.insert(post->lost.begin(), post->lost.end());
    }
    std::vector<int> pending;
    for (int q = 0; q < size; ++q)
      if (posted.count(q) == 0 && excluded.count(q) == 0) pending.push_back(q);
    const bool all_lost = std::all_of(pending.begin(), pending.end(),
                                      [&](int q) { return lost.count(q) != 0; });
    if (pending.empty() || (all_lost && Clock::now() >= grace_end) || wait_until.expired()) {
      for (int q : pending) excluded[q] = lost.count(q) != 0 ? kLost : kSilent;
      // The first to finish publishes; the counter makes "first" atomic in the store.
      WEFT_ASSIGN_OR_RETURN(int64_t claim, store.Add(prefix + "/claim", 1, op()));
      if (claim == 1) {
        ShrinkDecision d{rank, excluded};
        WEFT_RETURN_IF_ERROR(store.Set(decision_key, EncodeShrinkDecision(d), op()));
      }
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  auto v = store.Get(decision_key, op());
  if (!v.ok())
    return v.status().WithContext("waiting for the rank that claimed the decision to publish it");
  return DecodeShrinkDecision(v.value(), size);
}

std::string Reason(char why, double timeout_s) {
  switch (why) {
    case kListed: return "a survivor's exclude list names it";
    case kLost:
      return fmt::format("a survivor's error names it as lost and it did not take part "
                         "within {:.1f} s",
                         std::min(kLostGraceSeconds, timeout_s));
    default: return fmt::format("it did not take part within WEFT_TIMEOUT ({:.1f} s)", timeout_s);
  }
}

// Same on every member: the parent's id, the shrink's index and the members.
uint64_t ChildId(uint64_t parent, uint64_t epoch, const std::vector<int>& members) {
  uint64_t h = parent ^ (0xd6e8feb86659fd93ull * (epoch + 1));
  for (int m : members) h = (h ^ static_cast<uint64_t>(m)) * 0x100000001b3ull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

// `exclude` sorted; InvalidArgument for a rank out of range, one listed twice, or all.
Result<std::vector<int>> SortedExcludeList(const std::vector<int>& exclude, int size,
                                           const std::string& what) {
  std::vector<int> listed = exclude;
  std::sort(listed.begin(), listed.end());
  for (int r : listed)
    if (r < 0 || r >= size)
      return InvalidArgument(fmt::format("{}: excluded rank {} is out of range [0, {})", what,
                                         r, size));
  auto dup = std::adjacent_find(listed.begin(), listed.end());
  if (dup != listed.end())
    return InvalidArgument(fmt::format("{}: rank {} is listed twice in the exclude list", what,
                                       *dup));
  if (static_cast<int>(listed.size()) == size)
    return InvalidArgument(fmt::format(
        "{}: the exclude list names all {} ranks: no communicator would remain", what, size));
  return listed;
}

}  // namespace

Result<std::unique_ptr<Communicator>> Shrink(Communicator& parent,
                                             const std::vector<int>& exclude,
                                             bool abort_parent) {
  const int rank = parent.rank();
  const int size = parent.size();
  const std::string what = fmt::format("rank {}: weftCommShrink", rank);

  WEFT_ASSIGN_OR_RETURN(const std::vector<int> listed, SortedExcludeList(exclude, size, what));
  // Counted here, so that a listed rank that calls anyway stays in step with the others
  // for later shrinks of this communicator.
  const uint64_t epoch = parent.NextShrinkEpoch();
  if (std::binary_search(listed.begin(), listed.end(), rank))
    return InvalidUsage(fmt::format(
        "{}: this rank is in its own exclude list; only the ranks that remain call "
        "weftCommShrink", what));
  const Communicator::Bootstrap& boot = parent.bootstrap();
  if (boot.store == nullptr || !boot.store_mu)
    return Internal(fmt::format("{}: this communicator has no rendezvous store connection", what));
  WEFT_ASSIGN_OR_RETURN(double timeout_s, TimeoutSeconds());

  // The failure's cause is read before an abort replaces it with "called weftCommAbort".
  ShrinkPost mine;
  mine.listed = listed;
  if (listed.empty()) {
    Status failure = parent.AsyncError();
    if (!failure.ok()) {
      for (int r : LostRanksNamedIn(failure.ToString(), size))
        if (r != rank) mine.lost.push_back(r);
    }
  }
  if (abort_parent) parent.Abort();

  const std::string prefix = fmt::format("weft/shrink/{:016x}/{}", parent.id(), epoch);
  Result<ShrinkDecision> decision = Internal("unset");
  {
    MutexLock lock(boot.store_mu.get());
    decision = Agree(*boot.store, prefix, rank, size, mine, timeout_s);
  }
  if (!decision.ok()) {
    return decision.status().WithContext(fmt::format(
        "{}: agreeing on the survivors through the rendezvous store at {} (it lives in the "
        "weftrun launcher, in the process that called weftGetUniqueId, or in rank 0 for "
        "other launchers; if that process is gone no shrink is possible)",
        what, boot.store->address().ToString()));
  }
  const ShrinkDecision& d = decision.value();
  auto self = d.excluded.find(rank);
  if (self != d.excluded.end())
    return InvalidUsage(fmt::format(
        "{}: this rank was left out by the survivors' agreement (decided by rank {}): {}",
        what, d.decider, Reason(self->second, timeout_s)));

  std::vector<int> members;
  std::vector<std::string> gone;
  for (int r = 0; r < size; ++r) {
    auto it = d.excluded.find(r);
    if (it == d.excluded.end())
      members.push_back(r);
    else
      gone.push_back(fmt::format("{} ({})", r, Reason(it->second, timeout_s)));
  }
  const int new_rank = static_cast<int>(
      std::find(members.begin(), members.end(), rank) - members.begin());
  const int new_size = static_cast<int>(members.size());
  WEFT_INFO("{}: {} of {} ranks remain; left out: {}; this rank becomes rank {} of {}", what,
            new_size, size, gone.empty() ? "none" : fmt::format("{}", fmt::join(gone, ", ")),
            new_rank, new_size);
  // The child replaces the parent: it keeps its name and current timeout.
  CommOptions inherited;
  inherited.timeout_s = parent.timeout_s();
  inherited.name = parent.name();
  auto child = CreateThroughStore(boot, prefix + "/cards", ChildId(parent.id(), epoch, members),
                                  new_rank, new_size, Deadline::AfterSeconds(timeout_s),
                                  inherited);
  if (!child.ok())
    return child.status().WithContext(fmt::format(
        "{}: connecting the new communicator of old ranks {} (this rank is new rank {})", what,
        bootstrap::FormatRanks(members), new_rank));
  return child;
}

}  // namespace weft::comm
