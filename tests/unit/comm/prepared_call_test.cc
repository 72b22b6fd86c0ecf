// The plan a repeated call reuses: which buffers become private temporaries, when an
// in-place input is copied aside, when an average is divided, and what counts as the
// same call.
#include "comm/prepared_call.h"

#include <gtest/gtest.h>

#include <vector>

namespace weft::comm {
namespace {

using sched::Collective;

Call MakeCall(Collective coll, const void* send, void* recv, size_t count, int root = 0,
              RedOp op = RedOp::kSum) {
  Call c;
  c.coll = coll;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.root = root;
  c.op = op;
  return c;
}

PreparedCall Prepare(const Call& c, int rank, int size, const sched::Schedule& s,
                     uint16_t kind = 0) {
  return PrepareCall(c, rank, size, s, "test", kind, "call", nullptr);
}

TEST(PrepareCallTest, ContextFollowsTheCall) {
  sched::Schedule s;
  float in[4], out[4];
  PreparedCall p = Prepare(MakeCall(Collective::kReduce, in, out, 4, 2, RedOp::kMax), 1, 4, s);
  EXPECT_EQ(p.ctx.op, RedOp::kMax);
  EXPECT_EQ(p.ctx.root, 2);
  EXPECT_EQ(p.ctx.kind, static_cast<uint16_t>(Collective::kReduce));
  // A collective that ignores the op carries kSum, so ranks cannot differ on it.
  p = Prepare(MakeCall(Collective::kAllGather, in, out, 1, 0, RedOp::kMax), 0, 4, s);
  EXPECT_EQ(p.ctx.op, RedOp::kSum);
  EXPECT_EQ(p.ctx.root, -1);
  EXPECT_EQ(p.in_bytes, 4u);
  EXPECT_EQ(p.out_bytes, 16u);
  // The library's own calls carry their wire kind.
  p = Prepare(MakeCall(Collective::kAllReduce, in, out, 4), 0, 4, s, 0x7001);
  EXPECT_EQ(p.ctx.kind, 0x7001);
}

TEST(PrepareCallTest, NonRootsGetPrivateTemporaries) {
  sched::Schedule s;
  float in[8], out[8];
  PreparedCall p = Prepare(MakeCall(Collective::kReduce, in, nullptr, 8, 0), 1, 2, s);
  EXPECT_TRUE(p.private_output);
  EXPECT_FALSE(Prepare(MakeCall(Collective::kReduce, in, out, 8, 0), 0, 2, s).private_output);
  EXPECT_TRUE(Prepare(MakeCall(Collective::kGather, in, nullptr, 4, 1), 0, 2, s).private_output);
  EXPECT_TRUE(Prepare(MakeCall(Collective::kScatter, nullptr, out, 4, 1), 0, 2, s).private_input);
  // A non-root broadcast's input is never read: NULL gets a temporary, a buffer is used.
  EXPECT_TRUE(Prepare(MakeCall(Collective::kBroadcast, nullptr, out, 8, 0), 1, 2, s).private_input);
  EXPECT_FALSE(Prepare(MakeCall(Collective::kBroadcast, in, out, 8, 0), 1, 2, s).private_input);
}

TEST(PrepareCallTest, InPlaceInputIsCopiedOnlyWhereTheScheduleIsNotSafe) {
  sched::Schedule safe, unsafe;
  unsafe.inplace_safe = false;
  std::vector<float> buf(16), other(16);
  Call in_place = MakeCall(Collective::kAllReduce, buf.data(), buf.data(), 16);
  EXPECT_FALSE(Prepare(in_place, 0, 2, safe).copy_input);
  EXPECT_TRUE(Prepare(in_place, 0, 2, unsafe).copy_input);
  EXPECT_FALSE(Prepare(MakeCall(Collective::kAllReduce, other.data(), buf.data(), 16), 0, 2,
                       unsafe)
                   .copy_input);
  // Allgather in place: the input is this rank's block of the output.
  Call gather_in_place = MakeCall(Collective::kAllGather, buf.data() + 4, buf.data(), 4);
  EXPECT_TRUE(Prepare(gather_in_place, 1, 4, unsafe).copy_input);
  EXPECT_FALSE(Prepare(gather_in_place, 2, 4, unsafe).copy_input);
}

TEST(PrepareCallTest, AnAverageIsDividedWhereTheResultLands) {
  sched::Schedule s;
  float in[8], out[8];
  EXPECT_EQ(Prepare(MakeCall(Collective::kAllReduce, in, out, 8, 0, RedOp::kAvg), 0, 2, s)
                .divide_count,
            8u);
  EXPECT_EQ(Prepare(MakeCall(Collective::kReduceScatter, in, out, 3, 0, RedOp::kAvg), 0, 2, s)
                .divide_count,
            3u);
  EXPECT_EQ(Prepare(MakeCall(Collective::kReduce, in, out, 8, 1, RedOp::kAvg), 1, 2, s)
                .divide_count,
            8u);
  EXPECT_EQ(Prepare(MakeCall(Collective::kReduce, in, out, 8, 1, RedOp::kAvg), 0, 2, s)
                .divide_count,
            0u);
  EXPECT_EQ(Prepare(MakeCall(Collective::kAllReduce, in, out, 8), 0, 2, s).divide_count, 0u);
}

TEST(PrepareCallTest, BuffersAreReservedAgainOnEveryCall) {
  sched::Schedule s;
  s.scratch_count = 4;
  s.inplace_safe = false;
  std::vector<float> buf = {1, 2, 3, 4};
  Call c = MakeCall(Collective::kAllReduce, buf.data(), buf.data(), 4);
  PreparedCall p = Prepare(c, 0, 2, s);
  Temporaries temps;
  auto bufs = BuffersFor(p, c, temps);
  ASSERT_TRUE(bufs.ok()) << bufs.status().ToString();
  EXPECT_NE(bufs->input, buf.data());  // copied aside
  EXPECT_EQ(static_cast<const float*>(bufs->input)[3], 4.0f);
  EXPECT_EQ(bufs->output, buf.data());
  ASSERT_NE(bufs->scratch, nullptr);
  // Another call grows the scratch: the same plan gets the new one, not a stale pointer.
  void* grown = temps.scratch.Reserve(1 << 20);
  bufs = BuffersFor(p, c, temps);
  ASSERT_TRUE(bufs.ok());
  EXPECT_EQ(bufs->scratch, grown);
}

TEST(PrepareCallTest, SameCollectiveComparesEveryArgument) {
  float a[4], b[4];
  const Call base = MakeCall(Collective::kAllReduce, a, b, 4);
  EXPECT_TRUE(SameCollective(base, base));
  std::vector<Call> others(8, base);
  others[0].send = b;
  others[1].recv = a;
  others[2].count = 5;
  others[3].dtype = DataType::kInt32;
  others[4].op = RedOp::kMax;
  others[5].root = 1;
  others[6].coll = Collective::kReduce;
  others[7].kind = CallKind::kSend;
  for (size_t i = 0; i < others.size(); ++i)
    EXPECT_FALSE(SameCollective(base, others[i])) << "argument " << i;
}

}  // namespace
}  // namespace weft::comm
