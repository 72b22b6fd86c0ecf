// The interpreter must reject broken schedules with a message that says what is wrong,
// or the algorithm sweep would prove nothing.
#include "interpreter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace weft::sched {
namespace {

Step Send(int peer, Buf buf, size_t off, size_t count) {
  return {StepKind::kSend, peer, {buf, off, count}, {}};
}
Step Recv(int peer, Buf buf, size_t off, size_t count) {
  return {StepKind::kRecv, peer, {}, {buf, off, count}};
}
Step Copy(Slice dst, Slice src) { return {StepKind::kCopy, -1, src, dst}; }
Step Reduce(Slice dst, Slice src) { return {StepKind::kReduce, -1, src, dst}; }

Schedule Make(std::vector<std::vector<Step>> rounds, size_t scratch = 0) {
  Schedule s;
  s.scratch_count = scratch;
  for (auto& steps : rounds) s.rounds.push_back(Round{std::move(steps)});
  return s;
}

std::vector<std::byte> Bytes(const std::vector<int64_t>& v) {
  std::vector<std::byte> b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<int64_t> Ints(const std::vector<std::byte>& b) {
  std::vector<int64_t> v(b.size() / 8);
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

const ReduceFn kSum = [](void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    static_cast<int64_t*>(dst)[i] += static_cast<const int64_t*>(src)[i];
  }
};

// Two ranks, allreduce of `count` elements, inputs {1, 2, ...} and {10, 20, ...}.
Result<std::vector<std::vector<std::byte>>> Run2(const Schedule& s0, const Schedule& s1,
                                                 size_t count = 2, InterpretOptions opt = {}) {
  const CollectiveSpec spec{Collective::kAllReduce, 0, 2, 0, count};
  std::vector<int64_t> a(count), b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = int64_t(i + 1);
    b[i] = int64_t(10 * (i + 1));
  }
  return Interpret(spec, {s0, s1}, {Bytes(a), Bytes(b)}, 8, kSum, opt);
}

// A correct 2-rank allreduce: exchange into scratch, copy, reduce.
Schedule GoodAllReduce(int peer) {
  return Make({{Send(peer, Buf::kInput, 0, 2), Recv(peer, Buf::kScratch, 0, 2),
                Copy({Buf::kOutput, 0, 2}, {Buf::kInput, 0, 2}),
                Reduce({Buf::kOutput, 0, 2}, {Buf::kScratch, 0, 2})}},
              2);
}

void ExpectError(const Result<std::vector<std::vector<std::byte>>>& r, const std::string& what) {
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << what << "'";
  EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().ToString();
}

TEST(InterpreterTest, RunsACorrectSchedule) {
  for (bool in_place : {false, true}) {
    InterpretOptions opt;
    opt.in_place = in_place;
    auto r = Run2(GoodAllReduce(1), GoodAllReduce(0), 2, opt);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Ints(r.value()[0]), (std::vector<int64_t>{11, 22}));
    EXPECT_EQ(Ints(r.value()[1]), (std::vector<int64_t>{11, 22}));
  }
}

TEST(InterpreterTest, UnwrittenOutputIsNotZero) {
  auto r = Run2(Make({}), Make({}));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(Ints(r.value()[0])[0], 0);
}

TEST(InterpreterTest, DetectsDeadlock) {
  // Both ranks wait to receive before they send.
  const Schedule s0 = Make({{Recv(1, Buf::kOutput, 0, 2)}, {Send(1, Buf::kInput, 0, 2)}});
  const Schedule s1 = Make({{Recv(0, Buf::kOutput, 0, 2)}, {Send(0, Buf::kInput, 0, 2)}});
  ExpectError(Run2(s0, s1), "deadlock");
  ExpectError(Run2(s0, s1), "rank 1 round 0 waits for message #0 from rank 0");
}

TEST(InterpreterTest, RendezvousDeadlockThatEagerHides) {
  // Each rank sends first and receives in a later round: fine if sends are buffered,
  // a deadlock if a send completes only when received.
  const Schedule s0 = Make({{Send(1, Buf::kInput, 0, 2)}, {Recv(1, Buf::kOutput, 0, 2)}});
  const Schedule s1 = Make({{Send(0, Buf::kInput, 0, 2)}, {Recv(0, Buf::kOutput, 0, 2)}});
  InterpretOptions eager;
  eager.rendezvous = false;
  EXPECT_TRUE(Run2(s0, s1, 2, eager).ok());
  ExpectError(Run2(s0, s1), "deadlock");
}

TEST(InterpreterTest, DetectsCountMismatch) {
  const Schedule s0 = Make({{Send(1, Buf::kInput, 0, 2)}});
  const Schedule s1 = Make({{Recv(0, Buf::kOutput, 0, 1)}});
  ExpectError(Run2(s0, s1), "message size mismatch");
}

TEST(InterpreterTest, DetectsOutOfBounds) {
  const Schedule s0 = Make({{Send(1, Buf::kInput, 1, 2)}});
  const Schedule s1 = Make({{Recv(0, Buf::kOutput, 0, 2)}});
  ExpectError(Run2(s0, s1), "out of bounds");
  // Scratch beyond scratch_count.
  const Schedule s2 = Make({{Recv(0, Buf::kScratch, 0, 2)}}, 1);
  ExpectError(Run2(Make({{Send(1, Buf::kInput, 0, 2)}}), s2), "out of bounds");
}

TEST(InterpreterTest, DetectsSelfSend) {
  const Schedule s0 = Make({{Send(0, Buf::kInput, 0, 2), Recv(0, Buf::kOutput, 0, 2)}});
  ExpectError(Run2(s0, Make({})), "itself");
}

TEST(InterpreterTest, DetectsPeerOutOfRange) {
  ExpectError(Run2(Make({{Send(2, Buf::kInput, 0, 2)}}), Make({})), "peer 2");
}

TEST(InterpreterTest, DetectsLeftoverMessages) {
  InterpretOptions eager;
  eager.rendezvous = false;
  ExpectError(Run2(Make({{Send(1, Buf::kInput, 0, 2)}}), Make({}), 2, eager), "never received");
  // With rendezvous the unmatched send blocks its rank instead.
  ExpectError(Run2(Make({{Send(1, Buf::kInput, 0, 2)}}), Make({})), "deadlock");
}

TEST(InterpreterTest, DetectsSendRecvRaceInARound) {
  // Receive into the very output region that is being sent in the same round.
  const Schedule s0 = Make({{Send(1, Buf::kOutput, 0, 2), Recv(1, Buf::kOutput, 1, 1)}});
  const Schedule s1 = Make({{Send(0, Buf::kInput, 0, 1), Recv(0, Buf::kOutput, 0, 2)}});
  ExpectError(Run2(s0, s1), "data race");
}

TEST(InterpreterTest, DetectsRecvRecvRace) {
  const Schedule s0 = Make({{Recv(1, Buf::kOutput, 0, 2), Recv(1, Buf::kOutput, 1, 1)}});
  const Schedule s1 = Make({{Send(0, Buf::kInput, 0, 2), Send(0, Buf::kInput, 0, 1)}});
  ExpectError(Run2(s0, s1), "data race");
}

TEST(InterpreterTest, DetectsRaceOnlyWhenInPlace) {
  // Sending the input while receiving into the output is fine out of place, a race when
  // the two alias (allreduce in place: input == output).
  const Schedule s = Make({{Send(1, Buf::kInput, 0, 2), Recv(1, Buf::kOutput, 0, 2)}});
  Schedule t = s;
  t.rounds[0].steps[0].peer = 0;
  t.rounds[0].steps[1].peer = 0;
  EXPECT_TRUE(Run2(s, t).ok());
  InterpretOptions in_place;
  in_place.in_place = true;
  ExpectError(Run2(s, t, 2, in_place), "input aliases output");
  // ... unless the schedule declares itself not in-place safe: the input is copied aside.
  Schedule s_unsafe = s, t_unsafe = t;
  s_unsafe.inplace_safe = t_unsafe.inplace_safe = false;
  auto r = Run2(s_unsafe, t_unsafe, 2, in_place);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Ints(r.value()[0]), (std::vector<int64_t>{10, 20}));
}

TEST(InterpreterTest, DetectsWriteToInput) {
  const Schedule s0 = Make({{Copy({Buf::kInput, 0, 1}, {Buf::kInput, 1, 1})}});
  ExpectError(Run2(s0, Make({})), "writes into the input");
}

TEST(InterpreterTest, DetectsOverlappingLocalSteps) {
  ExpectError(Run2(Make({{Copy({Buf::kOutput, 0, 1}, {Buf::kInput, 0, 1}),
                          Reduce({Buf::kOutput, 0, 2}, {Buf::kOutput, 1, 1})}}),
                   Make({})),
              "destination has");
  ExpectError(Run2(Make({{Reduce({Buf::kOutput, 0, 1}, {Buf::kOutput, 0, 1})}}), Make({})),
              "overlaps");
  ExpectError(Run2(Make({{Copy({Buf::kOutput, 0, 2}, {Buf::kOutput, 1, 2})}}), Make({}), 3),
              "partly overlaps");
}

TEST(InterpreterTest, ErrorsNameRankRoundAndStep) {
  const Schedule s1 = Make({{}, {Send(0, Buf::kInput, 0, 2), Send(0, Buf::kOutput, 1, 5)}});
  auto r = Run2(Make({}), s1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
  EXPECT_NE(r.status().message().find("rank 1 round 1 step 1 (send to 0 output[1+5])"),
            std::string::npos)
      << r.status().ToString();
}

TEST(InterpreterTest, FifoMatchingPerPair) {
  // Two messages 0 -> 1 in one round: they arrive in order.
  const Schedule s0 = Make({{Send(1, Buf::kInput, 1, 1), Send(1, Buf::kInput, 0, 1)}});
  const Schedule s1 = Make({{Recv(0, Buf::kOutput, 0, 1), Recv(0, Buf::kOutput, 1, 1)}});
  auto r = Run2(s0, s1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Ints(r.value()[1]), (std::vector<int64_t>{2, 1}));
}

TEST(InterpreterTest, SendCapturesDataWhenPosted) {
  // Rank 1 overwrites its output after sending it in the same round: the message holds
  // the old bytes.
  const Schedule s1 =
      Make({{Copy({Buf::kOutput, 0, 2}, {Buf::kInput, 0, 2})},
            {Send(0, Buf::kOutput, 0, 2), Reduce({Buf::kOutput, 0, 2}, {Buf::kInput, 0, 2})}});
  const Schedule s0 = Make({{Recv(1, Buf::kOutput, 0, 2)}});
  auto r = Run2(s0, s1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Ints(r.value()[0]), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(Ints(r.value()[1]), (std::vector<int64_t>{20, 40}));
}

TEST(InterpreterTest, RejectsMalformedInputs) {
  const CollectiveSpec spec{Collective::kAllReduce, 0, 2, 0, 2};
  auto r = Interpret(spec, {Make({})}, {Bytes({1, 2})}, 8, kSum);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  r = Interpret(spec, {Make({}), Make({})}, {Bytes({1, 2}), Bytes({1})}, 8, kSum);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

// --- registered buffers: kSync and the steps on a peer's buffers -----------------------

Step Sync(int peer) { return {StepKind::kSync, peer, {}, {}}; }
Step PeerReduce(int peer, Slice dst, Slice peer_src) {
  return {StepKind::kPeerReduce, peer, peer_src, dst};
}
Step PeerWrite(int peer, Slice peer_dst, Slice src) {
  return {StepKind::kPeerWrite, peer, src, peer_dst};
}

Result<std::vector<std::vector<std::byte>>> RunRegistered2(const Schedule& s0, const Schedule& s1,
                                                           bool registered = true) {
  CollectiveSpec spec{Collective::kAllReduce, 0, 2, 0, 2};
  spec.registered = registered;
  return Interpret(spec, {s0, s1}, {Bytes({1, 2}), Bytes({10, 20})}, 8, kSum);
}

// Rank r owns element r: reduces it from the peer's input, writes it into the peer's
// output, between two syncs.
Schedule Owner(int r, bool first_sync = true, bool last_sync = true) {
  const int p = 1 - r;
  const Slice mine_in{Buf::kInput, size_t(r), 1}, mine_out{Buf::kOutput, size_t(r), 1};
  std::vector<std::vector<Step>> rounds;
  if (first_sync) rounds.push_back({Sync(p)});
  rounds.push_back({Copy(mine_out, mine_in), PeerReduce(p, mine_out, mine_in),
                    PeerWrite(p, mine_out, mine_out)});
  if (last_sync) rounds.push_back({Sync(p)});
  return Make(rounds);
}

TEST(InterpreterRegistered, RunsPeerSteps) {
  auto out = RunRegistered2(Owner(0), Owner(1));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Ints(out.value()[0]), (std::vector<int64_t>{11, 22}));
  EXPECT_EQ(Ints(out.value()[1]), (std::vector<int64_t>{11, 22}));
}

TEST(InterpreterRegistered, RejectsPeerStepsWithoutRegisteredBuffers) {
  auto out = RunRegistered2(Owner(0), Owner(1), /*registered=*/false);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("registered"), std::string::npos)
      << out.status().ToString();
}

TEST(InterpreterRegistered, RejectsReadingAPeerBeforeItEntered) {
  auto out = RunRegistered2(Owner(0, /*first_sync=*/false), Owner(1, false));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("before that rank entered"), std::string::npos)
      << out.status().ToString();
}

TEST(InterpreterRegistered, RejectsWritingAPeerThatMayHaveReturned) {
  auto out = RunRegistered2(Owner(0, true, /*last_sync=*/false), Owner(1, true, false));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("may have returned"), std::string::npos)
      << out.status().ToString();
}

// Both ranks reduce element 0 and write it into the other's output with no sync between:
// each writes what the other reads.
TEST(InterpreterRegistered, RejectsUnorderedAccessesToTheSameElements) {
  auto racy = [](int r) {
    const int p = 1 - r;
    const Slice out0{Buf::kOutput, 0, 1}, in0{Buf::kInput, 0, 1};
    return Make({{Sync(p)},
                 {Copy(out0, in0), PeerReduce(p, out0, in0), PeerWrite(p, out0, out0)},
                 {Sync(p)}});
  };
  auto out = RunRegistered2(racy(0), racy(1));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("data race"), std::string::npos)
      << out.status().ToString();
}

TEST(InterpreterRegistered, RejectsWritingAPeersInputAndAnUnmatchedSync) {
  const Slice in0{Buf::kInput, 0, 1};
  auto out = RunRegistered2(Make({{Sync(1)}, {PeerWrite(1, in0, in0)}, {Sync(1)}}),
                            Make({{Sync(0)}, {Sync(0)}}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("peer's input"), std::string::npos)
      << out.status().ToString();
  auto stuck = RunRegistered2(Make({{Sync(1)}}), Make({}));
  ASSERT_FALSE(stuck.ok());
  EXPECT_NE(stuck.status().message().find("waits for sync #0 from rank 1"), std::string::npos)
      << stuck.status().ToString();
}

}  // namespace
}  // namespace weft::sched
