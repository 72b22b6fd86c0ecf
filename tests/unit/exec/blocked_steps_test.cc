// The executor runs a registered round's local steps piece by piece
// (Executor::RunBlocked, executor_blocked.cc) only where that computes what step by step
// does. Each test runs a round of local steps on "peer" buffers that are this process's
// own (PeerBuffers only holds pointers), large enough to be cut into pieces, and checks
// every element against the step-by-step result.
#include <gtest/gtest.h>

#include <vector>

#include "exec/executor.h"
#include "executor_test_util.h"

namespace weft::exec {
namespace {

using sched::Buf;
using sched::Round;
using sched::Schedule;
using sched::Step;
using sched::StepKind;
using testing::Copy;

constexpr size_t kCount = 768 * 1024;  // float32 elements: 3 MiB, many 64 KiB pieces

Step PeerReduce(sched::Slice dst, int peer, sched::Slice peer_src) {
  return {StepKind::kPeerReduce, peer, peer_src, dst};
}
Step PeerWrite(int peer, sched::Slice peer_dst, sched::Slice src) {
  return {StepKind::kPeerWrite, peer, src, peer_dst};
}

std::vector<float> Ramp(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i % 1000);
  return v;
}

// Runs `steps` as one round on thread-rank 0 (rank 1 runs nothing), with rank 1's
// buffers standing in as the peer's.
void RunOnRankZero(const std::vector<Step>& steps, const void* input, void* output,
                   std::vector<float>* peer_in, std::vector<float>* peer_out) {
  PeerBuffers peers;
  peers.input = {nullptr, reinterpret_cast<char*>(peer_in->data())};
  peers.output = {nullptr, reinterpret_cast<char*>(peer_out->data())};
  Schedule s;
  s.rounds.push_back(Round{steps});
  testing::WithTwoShmRanks([&](int r, Executor& ex) {
    if (r != 0) return Status::Ok();
    return ex.Run(s, testing::TestContext("blocked_steps_test"), {input, output, nullptr, &peers});
  });
}

// The single-pass allreduce's round on 2 ranks: out = in + peer's in, then peer's out =
// out. Out of place and in place (the input is the output).
TEST(BlockedStepsTest, AllReduceRoundIsRightOutOfPlaceAndInPlace) {
  for (bool in_place : {false, true}) {
    std::vector<float> in = Ramp(kCount, 1.0f), out(kCount, -1.0f);
    std::vector<float> peer_in = Ramp(kCount, 5.0f), peer_out(kCount, -2.0f);
    const std::vector<float> want_in = in;
    float* input = in_place ? out.data() : in.data();
    if (in_place) out = in;
    RunOnRankZero({Copy({Buf::kOutput, 0, kCount}, {Buf::kInput, 0, kCount}),
                   PeerReduce({Buf::kOutput, 0, kCount}, 1, {Buf::kInput, 0, kCount}),
                   PeerWrite(1, {Buf::kOutput, 0, kCount}, {Buf::kOutput, 0, kCount})},
                  input, out.data(), &peer_in, &peer_out);
    for (size_t i = 0; i < kCount; ++i) {
      const float want = want_in[i] + peer_in[i];
      ASSERT_EQ(out[i], want) << "in place " << in_place << ", element " << i;
      ASSERT_EQ(peer_out[i], want) << "in place " << in_place << ", element " << i;
    }
    if (!in_place) {
      EXPECT_EQ(in, want_in);
    }
  }
}

// A later step reads the output `shift` elements past where the first one writes it: run
// piece by piece, it would read elements the copy has not reached yet. The executor must
// run these steps one after the other.
TEST(BlockedStepsTest, StepsOverlappingAtAnotherAddressRunOneAfterTheOther) {
  constexpr size_t kShift = 1000;
  std::vector<float> in = Ramp(kCount, 1.0f), out(kCount + kShift, -1.0f);
  std::vector<float> peer_in(kCount, 0.0f), peer_out(kCount, -2.0f);
  RunOnRankZero({Copy({Buf::kOutput, 0, kCount}, {Buf::kInput, 0, kCount}),
                 PeerWrite(1, {Buf::kOutput, 0, kCount}, {Buf::kOutput, kShift, kCount})},
                in.data(), out.data(), &peer_in, &peer_out);
  for (size_t i = 0; i < kCount; ++i) {
    // Step by step, the copy is complete before the write reads out[shift + i].
    const float want = i + kShift < kCount ? in[i + kShift] : -1.0f;
    ASSERT_EQ(peer_out[i], want) << "element " << i;
  }
}

}  // namespace
}  // namespace weft::exec
