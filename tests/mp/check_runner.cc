#include "check_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "check_dtypes.h"

namespace check {
namespace {

// weftTest polling gives up after this long; the library's own WEFT_TIMEOUT should fire
// well before (this only catches a request that never reports anything).
constexpr auto kTestPollLimit = std::chrono::seconds(600);

}  // namespace

Runner::Runner(weftComm_t comm, int rank, int nranks, const Options& opts, Tally* tally)
    : comm_(comm), rank_(rank), nranks_(nranks), opts_(opts), tally_(tally) {
  if (opts.memory == Memory::kShared || (opts.memory == Memory::kEven && rank % 2 == 0))
    arena_ = std::make_unique<SharedArena>(comm);
  if (opts.memory == Memory::kAllocated) arena_ = std::make_unique<SharedArena>(nullptr);
  if (opts.memory == Memory::kShmFile)
    arena_ = std::make_unique<SharedArena>(nullptr, /*shm_file=*/true);
}

std::string Runner::CheckAlgorithm(const Case& c) {
  const size_t min_bytes =
      opts_.memory == Memory::kShmFile ? kSinglePassFileMinBytes : kSinglePassMinBytes;
  bool taken = false;
  switch (c.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
    case Coll::kBroadcast:
    case Coll::kAllGather:
    case Coll::kReduceScatter:
    case Coll::kGather:
    case Coll::kScatter:
      taken = nranks_ >= 2 && CaseRun::LargestBytes(c, nranks_) >= min_bytes;
      break;
    case Coll::kAllToAll:  // out of place only: every rank runs the case alike
      taken = nranks_ >= 2 && CaseRun::LargestBytes(c, nranks_) >= min_bytes &&
              !c.in_place;
      break;
    default:
      return "";  // not a collective the algorithm names
  }
  const char* algo = "";
  if (weftCommGetLastAlgorithm(comm_, &algo) != weftSuccess) algo = "?";
  if ((std::strcmp(algo, "single_pass") == 0) == taken) return "";
  return "FAIL " + Describe(c) + " rank=" + std::to_string(rank_) + ": ran " + algo +
         (taken ? ", expected single_pass" : ", expected the plain path");
}

void Runner::Record(const std::string& failure) {
  if (failure.empty()) {
    ++tally_->passed;
    return;
  }
  ++tally_->failed;
  if (tally_->printed++ < opts_.max_print) std::fprintf(stderr, "%s\n", failure.c_str());
}

void Runner::RunMatrix() {
  const std::vector<int> roots = RootsFor(opts_, nranks_);
  for (Coll coll : opts_.colls) {
    if (coll == Coll::kSendRecv && nranks_ == 1) continue;  // no peer to ring with
    if (coll == Coll::kBarrier) {
      for (Mode mode : opts_.modes) {
        Case c;
        c.coll = coll;
        c.mode = mode;
        c.salt = NextSalt();
        RunBatch({c});
        if (!tally_->fatal.empty()) return;
      }
      continue;
    }
    std::vector<weftRedOp_t> ops = IsReduction(coll) ? opts_.ops : std::vector{weftSum};
    std::vector<int> coll_roots = IsRooted(coll) ? roots : std::vector{0};
    std::vector<bool> placements = HasInPlace(coll) ? opts_.placements : std::vector{false};
    if (placements.empty()) continue;  // --inplace=yes on a collective without one
    for (weftDataType_t dt : opts_.dtypes) {
      for (weftRedOp_t op : ops) {
        for (int root : coll_roots) {
          for (bool in_place : placements) {
            for (Mode mode : opts_.modes) {
              std::vector<Case> batch;
              for (size_t count : opts_.counts) {
                Case c{coll, dt, op, count, root, in_place, mode, NextSalt()};
                batch.push_back(c);
              }
              RunBatch(batch);
              if (!tally_->fatal.empty()) return;
            }
          }
        }
      }
    }
  }
}

void Runner::RunBatch(const std::vector<Case>& batch) {
  if (batch.empty()) return;
  if (opts_.verbose && rank_ == 0) {
    std::printf("batch: %s (+%zu counts)\n", Describe(batch.front()).c_str(), batch.size() - 1);
    std::fflush(stdout);
  }
  if (arena_ != nullptr) {
    size_t bytes = 0;
    for (const Case& c : batch) bytes += CaseRun::BytesNeeded(c, nranks_);
    std::string error;
    if (!arena_->Reset(bytes, &error)) {
      tally_->fatal = "ERROR rank=" + std::to_string(rank_) + ": " + error;
      return;
    }
  }
  std::vector<CaseRun> runs;
  runs.reserve(batch.size());
  std::vector<std::string> wrong_algorithm;
  for (const Case& c : batch) {
    runs.emplace_back(c, rank_, nranks_, arena_.get());
    std::string error;
    if (runs.back().Start(comm_, &error) != weftSuccess) {
      tally_->fatal = "ERROR " + Describe(c) + " rank=" + std::to_string(rank_) + ": " + error;
      return;
    }
    if (opts_.expect_single_pass && c.mode == Mode::kBlocking) {
      std::string bad = CheckAlgorithm(c);
      if (!bad.empty()) wrong_algorithm.push_back(bad);
    }
  }
  for (const std::string& bad : wrong_algorithm) Record(bad);
  if (batch.front().mode != Mode::kBlocking) Complete(runs, batch.front().mode);
  if (!tally_->fatal.empty()) return;
  for (CaseRun& run : runs) {
    if (opts_.self_test && run.SpoilOneOutput()) {
      // The verdict inverts: the spoiled case must fail verification.
      Record(run.Verify().empty()
                 ? "SELF-TEST MISSED " + Describe(run.spec()) + " rank=" + std::to_string(rank_) +
                       ": a spoiled output element verified as correct"
                 : "");
      continue;
    }
    Record(run.Verify());
  }
}

void Runner::Complete(std::vector<CaseRun>& runs, Mode mode) {
  auto fail = [&](const CaseRun& run, const char* fn, weftResult_t res) {
    tally_->fatal = "ERROR " + Describe(run.spec()) + " rank=" + std::to_string(rank_) + ": " + fn +
                    " returned " + weftGetErrorString(res) + ": " + weftGetLastError(comm_);
  };
  if (mode == Mode::kWait) {
    // In issue order; each weftWait frees its request.
    for (CaseRun& run : runs) {
      for (weftRequest_t& req : run.requests()) {
        weftResult_t res = weftWait(req);
        req = nullptr;
        if (res != weftSuccess) return fail(run, "weftWait", res);
      }
    }
    return;
  }
  // kTest: poll every outstanding request, latest first, so completion of a later
  // request cannot rely on the caller waiting for an earlier one.
  const auto limit = std::chrono::steady_clock::now() + kTestPollLimit;
  for (;;) {
    bool pending = false;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      for (weftRequest_t& req : it->requests()) {
        if (req == nullptr) continue;
        int done = 0;
        weftResult_t res = weftTest(req, &done);
        if (done) req = nullptr;  // freed by weftTest
        if (res != weftSuccess) return fail(*it, "weftTest", res);
        if (!done) pending = true;
      }
    }
    if (!pending) return;
    // Polling, not spinning: ranks may outnumber cores, and a spinning caller would take
    // the CPU from the peers (and progress threads) it is waiting for.
    std::this_thread::yield();
    if (std::chrono::steady_clock::now() > limit) {
      tally_->fatal = "ERROR rank=" + std::to_string(rank_) +
                      ": weftTest never reported completion within 600 s";
      return;
    }
  }
}

}  // namespace check
