// The executor reduces a receive where the shm ring holds it (RecvOp::consume) instead of
// copying it into scratch first, but only where nothing reads that scratch afterwards
// (exec/scratch_liveness.h). These tests check the rule on schedules as data, and on two
// shm thread-ranks that the result is right both when the receive is consumed in place
// (its scratch is then never written) and when a later step needs the scratch.
#include <gtest/gtest.h>

#include <vector>

#include "exec/executor.h"
#include "exec/scratch_liveness.h"
#include "executor_test_util.h"

namespace weft::exec {
namespace {

using sched::Buf;
using sched::Round;
using sched::Schedule;
using sched::Slice;
using sched::Step;
using sched::StepKind;
using testing::Copy;
using testing::Recv;
using testing::Reduce;
using testing::Send;

Slice In(size_t off, size_t n) { return {Buf::kInput, off, n}; }
Slice Out(size_t off, size_t n) { return {Buf::kOutput, off, n}; }
Slice Scr(size_t off, size_t n) { return {Buf::kScratch, off, n}; }

// Round 0 of every schedule below: receive 100 elements into scratch[0, 100) and fold
// them into the output (the ring allreduce's reduce-scatter step); the steps after
// `first_local + 2` are what the rule looks at.
Round FoldRound() {
  return Round{{Send(1, In(0, 100)), Recv(1, Scr(0, 100)), Copy(Out(0, 100), In(0, 100)),
                Reduce(Out(0, 100), Scr(0, 100))}};
}
Schedule With(std::vector<Round> later) {
  Schedule s;
  s.rounds.push_back(FoldRound());
  for (auto& r : later) s.rounds.push_back(std::move(r));
  return s;
}
bool ReadLater(const Schedule& s) { return ScratchReadLater(s, 0, 4, Scr(0, 100)); }

TEST(ScratchLivenessTest, UnreadScratchIsDead) {
  EXPECT_FALSE(ReadLater(With({})));
  EXPECT_FALSE(ReadLater(With({Round{{Send(1, Out(0, 100)), Recv(1, Out(100, 100))}}})));
  EXPECT_FALSE(ReadLater(With({Round{{Send(1, Scr(100, 50))}}}))) << "beside it";
}

TEST(ScratchLivenessTest, LaterReadsKeepItLive) {
  EXPECT_TRUE(ReadLater(With({Round{{Send(1, Scr(50, 10))}}})));
  EXPECT_TRUE(ReadLater(With({Round{{Copy(Out(0, 10), Scr(99, 1))}}})));
  EXPECT_TRUE(ReadLater(With({Round{{Reduce(Scr(0, 100), Out(0, 100))}}})));
  // In the same round, after the fold.
  Schedule s = With({});
  s.rounds[0].steps.push_back(Copy(Out(100, 100), Scr(0, 100)));
  EXPECT_TRUE(ReadLater(s));
  // Not scratch at all: the output is the user's.
  EXPECT_TRUE(ScratchReadLater(s, 0, 4, Out(0, 100)));
}

TEST(ScratchLivenessTest, AReceiveThatOverwritesItEndsTheScan) {
  // Overwritten whole, then read: the read sees the new bytes.
  EXPECT_FALSE(ReadLater(With({Round{{Recv(1, Scr(0, 100))}}, Round{{Send(1, Scr(0, 100))}}})));
  // Overwritten from both ends in two rounds.
  EXPECT_FALSE(ReadLater(With({Round{{Recv(1, Scr(0, 60))}}, Round{{Recv(1, Scr(60, 40))}},
                               Round{{Send(1, Scr(0, 100))}}})));
  // The tail is still the old bytes when it is read.
  EXPECT_TRUE(ReadLater(With({Round{{Recv(1, Scr(0, 60))}}, Round{{Send(1, Scr(0, 100))}}})));
  // A send in the same round as the overwrite reads the old bytes.
  EXPECT_TRUE(ReadLater(With({Round{{Send(1, Scr(0, 100)), Recv(1, Scr(0, 100))}}})));
  // Only the middle overwritten: conservatively live.
  EXPECT_TRUE(ReadLater(With({Round{{Recv(1, Scr(10, 10))}}, Round{{Send(1, Scr(0, 5))}}})));
}

TEST(ScratchLivenessTest, TooLongAScanCountsAsRead) {
  std::vector<Round> many(600, Round{{Send(1, Out(0, 1))}});
  EXPECT_TRUE(ReadLater(With(many)));
  many.resize(100);
  EXPECT_FALSE(ReadLater(With(many)));
}

// --- On two shm thread-ranks -------------------------------------------------------------

constexpr size_t kCount = 256 * 1024;  // float32: 1 MiB, larger than a 256 KiB piece



std::vector<float> Ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i % 997);
  return v;
}

// Each rank sends its input and folds the peer's into its output: out = in + peer's in.
// `then`: rounds after it. Returns each rank's output and scratch.
struct Result2 {
  std::vector<float> out[2], scratch[2];
};
Result2 RunFold(const std::vector<Round>& then) {
  Result2 res;
  std::vector<float> in[2] = {Ramp(kCount, 1.0f), Ramp(kCount, 1000.0f)};
  testing::WithTwoShmRanks([&](int r, Executor& ex) {
    const int peer = 1 - r;
    Schedule s;
    s.rounds.push_back(Round{{Send(peer, In(0, kCount)), Recv(peer, Scr(0, kCount)),
                              Copy(Out(0, kCount), In(0, kCount)),
                              Reduce(Out(0, kCount), Scr(0, kCount))}});
    for (const Round& round : then) {
      Round mine = round;
      for (Step& st : mine.steps)
        if (st.peer >= 0) st.peer = peer;
      s.rounds.push_back(mine);
    }
    s.scratch_count = kCount;
    res.out[r].assign(2 * kCount, -1.0f);
    res.scratch[r].assign(kCount, -7.0f);
    ExecContext ctx = testing::TestContext("in_place_reduce_test");
    return ex.Run(s, ctx, {in[r].data(), res.out[r].data(), res.scratch[r].data()});
  });
  return res;
}

TEST(InPlaceReduceTest, ReducedFromTheRingScratchNeverWritten) {
  Result2 res = RunFold({});
  std::vector<float> want = Ramp(kCount, 1.0f), b = Ramp(kCount, 1000.0f);
  for (size_t i = 0; i < kCount; ++i) want[i] += b[i];
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(std::vector<float>(res.out[r].begin(), res.out[r].begin() + kCount), want)
        << "rank " << r;
    EXPECT_EQ(res.scratch[r], std::vector<float>(kCount, -7.0f))
        << "rank " << r << ": the receive was copied into scratch, not consumed in place";
  }
}

TEST(InPlaceReduceTest, ScratchReadLaterIsReceivedIntoIt) {
  // After the fold, each rank sends its scratch (the peer's input) back into the second
  // half of the peer's output: so the receive must land in scratch.
  Result2 res = RunFold({Round{{Send(0, Scr(0, kCount)), Recv(0, Out(kCount, kCount))}}});
  std::vector<float> want = Ramp(kCount, 1.0f), b = Ramp(kCount, 1000.0f);
  for (size_t i = 0; i < kCount; ++i) want[i] += b[i];
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(std::vector<float>(res.out[r].begin(), res.out[r].begin() + kCount), want)
        << "rank " << r;
    EXPECT_EQ(res.scratch[r], Ramp(kCount, r == 0 ? 1000.0f : 1.0f)) << "rank " << r;
    EXPECT_EQ(std::vector<float>(res.out[r].begin() + kCount, res.out[r].end()),
              Ramp(kCount, r == 0 ? 1.0f : 1000.0f))
        << "rank " << r << ": its own input, back from the peer's scratch";
  }
}

}  // namespace
}  // namespace weft::exec
