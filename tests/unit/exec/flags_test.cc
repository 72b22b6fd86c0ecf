// The executor's flag waits outside a round (Executor::TakeFlags: a rank that raised its
// flags and went on, comm/registered_path.h) and the first round it skips after the
// registered path's agreement (ExecContext::entered_together). Two shm thread-ranks; a
// rank that raised or took one flag too many would wait for a flag that never comes, so
// each case runs under a short deadline and a mismatch fails as DeadlineExceeded.
#include <gtest/gtest.h>

#include <vector>

#include "exec/executor.h"
#include "executor_test_util.h"

namespace weft::exec {
namespace {

using sched::Round;
using sched::Schedule;
using sched::Step;
using sched::StepKind;

Schedule SyncRounds(int peer, int rounds) {
  Schedule s;
  for (int i = 0; i < rounds; ++i) s.rounds.push_back(Round{{Step{StepKind::kSync, peer, {}, {}}}});
  return s;
}

ExecContext ShortContext(const char* what) {
  ExecContext ctx = testing::TestContext(what);
  ctx.deadline = LazyDeadline::AfterSeconds(2);
  return ctx;
}

TEST(ExecutorFlags, TakeFlagsTakesWhatAPeerRaisedAndKeepsTheFlagsMatched) {
  // Rank 0 raises a flag and goes on (as a rank on plain buffers does); rank 1 takes it
  // with a full sync round. Then rank 0 takes rank 1's flag late, and a sync round on
  // both sides still pairs: nothing is left over or missing.
  auto s = testing::OnTwoShmRanks([](int r, transport::Mesh& mesh, Executor& ex) -> Status {
    const ExecContext ctx = ShortContext("flags");
    const int peer = 1 - r;
    if (r == 0) {
      mesh.link(peer)->RaiseFlag();
      WEFT_RETURN_IF_ERROR(ex.TakeFlags({peer}, ctx));
    } else {
      WEFT_RETURN_IF_ERROR(ex.Run(SyncRounds(peer, 1), ctx, {}));
    }
    WEFT_RETURN_IF_ERROR(ex.Run(SyncRounds(peer, 1), ctx, {}));
    if (mesh.link(peer)->PeerHasFlag()) return Internal("a flag left over");
    return Status::Ok();
  });
  EXPECT_TRUE(s[0].ok()) << s[0].ToString();
  EXPECT_TRUE(s[1].ok()) << s[1].ToString();
}

TEST(ExecutorFlags, TakeFlagsTimesOutNamingThePeer) {
  auto s = testing::OnTwoShmRanks([](int r, transport::Mesh&, Executor& ex) -> Status {
    if (r == 0) return Status::Ok();  // raises nothing
    ExecContext ctx = ShortContext("flags");
    ctx.deadline = LazyDeadline::AfterSeconds(0.2);
    return ex.TakeFlags({0}, ctx);
  });
  EXPECT_TRUE(s[0].ok());
  EXPECT_EQ(s[1].code(), Code::kDeadlineExceeded) << s[1].ToString();
  EXPECT_NE(s[1].message().find("flag"), std::string::npos) << s[1].ToString();
  EXPECT_NE(s[1].message().find("of rank 0"), std::string::npos) << s[1].ToString();
}

TEST(ExecutorFlags, EnteredTogetherSkipsAFirstRoundOfSyncsOnly) {
  // Rank 0 runs two sync rounds having "entered together", rank 1 one round: they pair
  // only if rank 0 skips its first.
  auto paired = testing::OnTwoShmRanks([](int r, transport::Mesh&, Executor& ex) -> Status {
    ExecContext ctx = ShortContext("skip");
    ctx.entered_together = r == 0;
    return ex.Run(SyncRounds(1 - r, r == 0 ? 2 : 1), ctx, {});
  });
  EXPECT_TRUE(paired[0].ok()) << paired[0].ToString();
  EXPECT_TRUE(paired[1].ok()) << paired[1].ToString();

  // Without the flag nothing is skipped: rank 0 waits for a second flag in vain.
  auto unpaired = testing::OnTwoShmRanks([](int r, transport::Mesh&, Executor& ex) -> Status {
    ExecContext ctx = ShortContext("no skip");
    ctx.deadline = LazyDeadline::AfterSeconds(0.3);
    return ex.Run(SyncRounds(1 - r, r == 0 ? 2 : 1), ctx, {});
  });
  EXPECT_EQ(unpaired[0].code(), Code::kDeadlineExceeded) << unpaired[0].ToString();
  EXPECT_TRUE(unpaired[1].ok()) << unpaired[1].ToString();

  // A first round that does more than sync runs even after the agreement.
  auto kept = testing::OnTwoShmRanks([](int r, transport::Mesh&, Executor& ex) -> Status {
    ExecContext ctx = ShortContext("kept");
    ctx.deadline = LazyDeadline::AfterSeconds(0.3);
    ctx.entered_together = true;
    float x[4] = {1, 2, 3, 4}, y[4] = {};
    Schedule s = SyncRounds(1 - r, 1);
    s.rounds[0].steps.push_back(testing::Copy({sched::Buf::kOutput, 0, 4}, {sched::Buf::kInput, 0, 4}));
    WEFT_RETURN_IF_ERROR(ex.Run(s, ctx, {x, y}));
    return y[3] == 4 ? Status::Ok() : Internal("the first round's copy did not run");
  });
  EXPECT_TRUE(kept[0].ok()) << kept[0].ToString();
  EXPECT_TRUE(kept[1].ok()) << kept[1].ToString();
}

}  // namespace
}  // namespace weft::exec
