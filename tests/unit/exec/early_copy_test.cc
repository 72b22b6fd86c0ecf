// The executor runs a round's first local copy while the round communicates
// (Executor::PlanEarlyCopy) only when that cannot change the result: a copy that reads
// what the round receives, or writes what the round sends, waits for the round. Each
// test delays the peer so that a copy run early would certainly run before the message
// moves, and would then leave the wrong bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "exec/executor.h"
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
using testing::Send;

// Large enough to be copied early (at least 64 KiB).
constexpr size_t kCount = 64 * 1024;  // float32 elements: 256 KiB
constexpr auto kPeerDelay = std::chrono::milliseconds(200);

Schedule OneRound(std::vector<Step> steps) {
  Schedule s;
  s.rounds.push_back(Round{std::move(steps)});
  return s;
}

std::vector<float> Filled(size_t n, float v) { return std::vector<float>(n, v); }



// Rank 1 receives into output[0, n) and copies that to output[n, 2n) in the same round:
// the copy must see the received bytes, not what was there before.
TEST(EarlyCopyTest, CopyOfWhatTheRoundReceivesWaitsForIt) {
  std::vector<float> in0 = Filled(kCount, 7.0f), out1 = Filled(2 * kCount, -1.0f);
  testing::WithTwoShmRanks([&](int r, Executor& ex) {
    ExecContext ctx = testing::TestContext("early_copy_test");
    if (r == 0) {
      std::this_thread::sleep_for(kPeerDelay);
      return ex.Run(OneRound({Send(1, {Buf::kInput, 0, kCount})}), ctx, {in0.data(), nullptr});
    }
    Schedule s = OneRound({Recv(0, {Buf::kOutput, 0, kCount}),
                           Copy({Buf::kOutput, kCount, kCount}, {Buf::kOutput, 0, kCount})});
    return ex.Run(s, ctx, {nullptr, out1.data()});
  });
  EXPECT_EQ(out1, Filled(2 * kCount, 7.0f));
}

// Rank 1 sends output[0, n) and overwrites it with its input in the same round: the peer
// must get the bytes from before the copy.
TEST(EarlyCopyTest, CopyOverWhatTheRoundSendsWaitsForIt) {
  std::vector<float> in1 = Filled(kCount, 3.0f), out1 = Filled(kCount, 5.0f),
                     out0 = Filled(kCount, -1.0f);
  testing::WithTwoShmRanks([&](int r, Executor& ex) {
    ExecContext ctx = testing::TestContext("early_copy_test");
    if (r == 0) {
      std::this_thread::sleep_for(kPeerDelay);
      return ex.Run(OneRound({Recv(1, {Buf::kOutput, 0, kCount})}), ctx, {nullptr, out0.data()});
    }
    Schedule s = OneRound({Send(0, {Buf::kOutput, 0, kCount}),
                           Copy({Buf::kOutput, 0, kCount}, {Buf::kInput, 0, kCount})});
    return ex.Run(s, ctx, {in1.data(), out1.data()});
  });
  EXPECT_EQ(out0, Filled(kCount, 5.0f)) << "the peer got the copy's bytes";
  EXPECT_EQ(out1, Filled(kCount, 3.0f));
}

// The root's own copy, independent of what it sends (broadcast_ring's last round): it
// may run early, and both sides end with the right bytes. Half the input is sent; the
// whole input is copied, reading (not writing) the bytes being sent.
TEST(EarlyCopyTest, IndependentCopyGivesTheSameResult) {
  std::vector<float> in0(2 * kCount), out0 = Filled(2 * kCount, -1.0f),
                                      out1 = Filled(kCount, -1.0f);
  for (size_t i = 0; i < in0.size(); ++i) in0[i] = static_cast<float>(i % 1000);
  testing::WithTwoShmRanks([&](int r, Executor& ex) {
    ExecContext ctx = testing::TestContext("early_copy_test");
    if (r == 1) {
      std::this_thread::sleep_for(kPeerDelay);
      return ex.Run(OneRound({Recv(0, {Buf::kOutput, 0, kCount})}), ctx, {nullptr, out1.data()});
    }
    Schedule s = OneRound({Send(1, {Buf::kInput, 0, kCount}),
                           Copy({Buf::kOutput, 0, 2 * kCount}, {Buf::kInput, 0, 2 * kCount})});
    return ex.Run(s, ctx, {in0.data(), out0.data()});
  });
  EXPECT_EQ(out0, in0);
  EXPECT_EQ(out1, std::vector<float>(in0.begin(), in0.begin() + kCount));
}

}  // namespace
}  // namespace weft::exec
