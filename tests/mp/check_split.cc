#include "check_split.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace check {
namespace {

struct SplitSpec {
  const char* name;
  int color;
  int key;
  std::vector<int> members;  // world ranks of this rank's group, in expected rank order
};

// The members of `rank`'s group when every world rank r picks (color(r), key(r)):
// ordered by (key, old rank), as weft.h specifies.
template <typename ColorFn, typename KeyFn>
SplitSpec Plan(const char* name, int rank, int nranks, ColorFn color, KeyFn key) {
  SplitSpec s{name, color(rank), key(rank), {}};
  if (s.color == WEFT_SPLIT_NOCOLOR) return s;
  std::vector<std::pair<int, int>> order;  // (key, world rank)
  for (int r = 0; r < nranks; ++r) {
    if (color(r) == s.color) order.emplace_back(key(r), r);
  }
  std::sort(order.begin(), order.end());
  for (auto& kr : order) s.members.push_back(kr.second);
  return s;
}

std::string Where(const SplitSpec& s, int rank) {
  return std::string("split ") + s.name + " rank=" + std::to_string(rank);
}

// One split: create, check identity and membership, run an allreduce per dtype/count.
void CheckOne(weftComm_t world, int rank, const SplitSpec& s, const Options& opts, Tally* t,
              uint64_t* salt) {
  weftComm_t sub = nullptr;
  weftResult_t res = weftCommSplit(world, s.color, s.key, &sub);
  if (res != weftSuccess) {
    t->fatal = "ERROR " + Where(s, rank) + ": weftCommSplit returned " +
               weftGetErrorString(res) + ": " + weftGetLastError(world);
    return;
  }
  auto record = [&](const std::string& failure) {
    if (failure.empty()) { ++t->passed; return; }
    ++t->failed;
    if (t->printed++ < opts.max_print) std::fprintf(stderr, "%s\n", failure.c_str());
  };
  if (s.color == WEFT_SPLIT_NOCOLOR) {
    record(sub == nullptr ? "" : "FAIL " + Where(s, rank) + ": NOCOLOR gave a communicator");
    return;
  }
  if (sub == nullptr) {
    record("FAIL " + Where(s, rank) + ": got no communicator");
    return;
  }
  int count = -1, sub_rank = -1;
  weftCommCount(sub, &count);
  weftCommUserRank(sub, &sub_rank);
  int expected_rank = -1;
  for (size_t i = 0; i < s.members.size(); ++i) {
    if (s.members[i] == rank) expected_rank = static_cast<int>(i);
  }
  record(count == static_cast<int>(s.members.size()) && sub_rank == expected_rank
             ? ""
             : "FAIL " + Where(s, rank) + ": size/rank " + std::to_string(count) + "/" +
                   std::to_string(sub_rank) + ", expected " +
                   std::to_string(s.members.size()) + "/" + std::to_string(expected_rank));

  // Membership and order: gather every member's world rank.
  std::vector<int32_t> ranks(s.members.size(), -1);
  int32_t mine = rank;
  res = weftAllGather(&mine, ranks.data(), 1, weftInt32, sub);
  if (res != weftSuccess) {
    t->fatal = "ERROR " + Where(s, rank) + ": weftAllGather returned " +
               weftGetErrorString(res) + ": " + weftGetLastError(sub);
    return;
  }
  std::string bad;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != s.members[i] && bad.empty()) {
      bad = "FAIL " + Where(s, rank) + ": member " + std::to_string(i) + " is world rank " +
            std::to_string(ranks[i]) + ", expected " + std::to_string(s.members[i]);
    }
  }
  record(bad);

  // Collectives on the sub-communicator, checked with the sub-communicator's ranks.
  Options sub_opts = opts;
  sub_opts.colls = {Coll::kAllReduce};
  sub_opts.ops = {weftSum};
  sub_opts.placements = {false};
  sub_opts.modes = {Mode::kBlocking, Mode::kWait};
  Runner runner(sub, sub_rank, count, sub_opts, t);
  for (weftDataType_t dt : {weftInt32, weftFloat32, weftBfloat16}) {
    for (Mode mode : sub_opts.modes) {
      std::vector<Case> batch;
      for (size_t n : {size_t{1}, size_t{1023}}) {
        batch.push_back(Case{Coll::kAllReduce, dt, weftSum, n, 0, false, mode, ++*salt});
      }
      runner.RunBatch(batch);
      if (!t->fatal.empty()) return;
    }
  }
  res = weftCommDestroy(sub);
  if (res != weftSuccess) {
    t->fatal = "ERROR " + Where(s, rank) + ": weftCommDestroy returned " +
               weftGetErrorString(res);
  }
}

}  // namespace

void RunSplitChecks(weftComm_t world, int rank, int nranks, const Options& opts, Tally* tally,
                    uint64_t salt_base) {
  uint64_t salt = salt_base;
  // Even and odd ranks, in world order.
  auto parity = Plan("even/odd", rank, nranks, [](int r) { return r % 2; },
                     [](int r) { return r; });
  CheckOne(world, rank, parity, opts, tally, &salt);
  if (!tally->fatal.empty()) return;
  // The last rank opts out; the rest form one group in reverse order (key = -rank).
  auto reversed = Plan(
      "nocolor/reversed", rank, nranks,
      [nranks](int r) { return nranks > 1 && r == nranks - 1 ? WEFT_SPLIT_NOCOLOR : 7; },
      [](int r) { return -r; });
  CheckOne(world, rank, reversed, opts, tally, &salt);
}

}  // namespace check
