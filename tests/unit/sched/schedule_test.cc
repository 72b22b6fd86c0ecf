#include "sched/schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace weft::sched {
namespace {

TEST(CollectiveNameTest, DistinctLowercaseNames) {
  std::set<std::string> names;
  for (int i = 0; i < kNumCollectives; ++i) {
    const std::string name = CollectiveName(static_cast<Collective>(i));
    EXPECT_NE(name, "unknown");
    for (char ch : name) EXPECT_TRUE(ch >= 'a' && ch <= 'z') << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumCollectives));
  EXPECT_STREQ(CollectiveName(Collective::kReduceScatter), "reducescatter");
  EXPECT_STREQ(CollectiveName(Collective::kAllToAll), "alltoall");
}

TEST(BufferCountsTest, FollowNcclCounts) {
  const int n = 5;
  const size_t c = 7;
  auto spec = [&](Collective coll, int rank) { return CollectiveSpec{coll, rank, n, 2, c}; };
  EXPECT_EQ(InputCount(spec(Collective::kAllReduce, 0)), c);
  EXPECT_EQ(OutputCount(spec(Collective::kAllReduce, 0)), c);
  EXPECT_EQ(InputCount(spec(Collective::kAllGather, 1)), c);
  EXPECT_EQ(OutputCount(spec(Collective::kAllGather, 1)), n * c);
  EXPECT_EQ(InputCount(spec(Collective::kReduceScatter, 3)), n * c);
  EXPECT_EQ(OutputCount(spec(Collective::kReduceScatter, 3)), c);
  EXPECT_EQ(InputCount(spec(Collective::kAllToAll, 4)), n * c);
  EXPECT_EQ(OutputCount(spec(Collective::kAllToAll, 4)), n * c);
  EXPECT_EQ(InputCount(spec(Collective::kBarrier, 0)), 0u);
  EXPECT_EQ(OutputCount(spec(Collective::kBarrier, 0)), 0u);
}

// Buffers that matter only at the root count zero elsewhere (NCCL lets non-roots pass
// null there), so no schedule may touch them.
TEST(BufferCountsTest, RootOnlyBuffersAreEmptyElsewhere) {
  const size_t c = 3;
  for (int rank : {0, 2}) {
    const bool root = rank == 2;
    const CollectiveSpec reduce{Collective::kReduce, rank, 4, 2, c};
    EXPECT_EQ(InputCount(reduce), c);
    EXPECT_EQ(OutputCount(reduce), root ? c : 0);
    const CollectiveSpec bcast{Collective::kBroadcast, rank, 4, 2, c};
    EXPECT_EQ(InputCount(bcast), root ? c : 0);
    EXPECT_EQ(OutputCount(bcast), c);
    const CollectiveSpec gather{Collective::kGather, rank, 4, 2, c};
    EXPECT_EQ(InputCount(gather), c);
    EXPECT_EQ(OutputCount(gather), root ? 4 * c : 0);
    const CollectiveSpec scatter{Collective::kScatter, rank, 4, 2, c};
    EXPECT_EQ(InputCount(scatter), root ? 4 * c : 0);
    EXPECT_EQ(OutputCount(scatter), c);
  }
}

TEST(InPlaceOffsetTest, NcclConvention) {
  EXPECT_EQ(InPlaceOffset({Collective::kAllReduce, 3, 8, 0, 10}), 0);
  EXPECT_EQ(InPlaceOffset({Collective::kBroadcast, 3, 8, 1, 10}), 0);
  EXPECT_EQ(InPlaceOffset({Collective::kAllGather, 3, 8, 0, 10}), 30);
  EXPECT_EQ(InPlaceOffset({Collective::kGather, 3, 8, 0, 10}), 30);
  EXPECT_EQ(InPlaceOffset({Collective::kReduceScatter, 3, 8, 0, 10}), -30);
  EXPECT_EQ(InPlaceOffset({Collective::kScatter, 3, 8, 0, 10}), -30);
  EXPECT_EQ(InPlaceOffset({Collective::kAllToAll, 3, 8, 0, 10}), 0);
}

// Chunks tile [0, count) in order, differ in size by at most one, larger ones first.
TEST(ChunkTest, ChunksTileTheBuffer) {
  for (int n = 1; n <= 64; ++n) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{63}, size_t{64},
                         size_t{65}, size_t{1009}, size_t{4099}}) {
      size_t next = 0;
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(ChunkOffset(count, n, i), next) << "n=" << n << " count=" << count << " i=" << i;
        const size_t size = ChunkSize(count, n, i);
        EXPECT_TRUE(size == count / n || size == count / n + 1);
        if (i > 0) {
          EXPECT_LE(size, ChunkSize(count, n, i - 1));
        }
        next += size;
      }
      EXPECT_EQ(next, count) << "n=" << n;
    }
  }
}

TEST(ChunkTest, SmallCountsLeaveTrailingChunksEmpty) {
  EXPECT_EQ(ChunkSize(3, 5, 0), 1u);
  EXPECT_EQ(ChunkSize(3, 5, 2), 1u);
  EXPECT_EQ(ChunkSize(3, 5, 3), 0u);
  EXPECT_EQ(ChunkOffset(3, 5, 4), 3u);
  EXPECT_EQ(ChunkSize(10, 4, 1), 3u);
  EXPECT_EQ(ChunkOffset(10, 4, 2), 6u);
  EXPECT_EQ(ChunkSize(10, 4, 3), 2u);
}

TEST(ToStringTest, OneLinePerStep) {
  Schedule s;
  s.scratch_count = 4;
  Round r;
  r.steps.push_back({StepKind::kSend, 1, {Buf::kInput, 0, 4}, {}});
  r.steps.push_back({StepKind::kRecv, 2, {}, {Buf::kScratch, 0, 4}});
  r.steps.push_back({StepKind::kReduce, -1, {Buf::kScratch, 0, 4}, {Buf::kOutput, 4, 4}});
  s.rounds.push_back(r);
  const std::string text = ToString(s);
  EXPECT_NE(text.find("1 rounds, scratch 4"), std::string::npos) << text;
  EXPECT_NE(text.find("send to 1 input[0+4]"), std::string::npos) << text;
  EXPECT_NE(text.find("recv from 2 scratch[0+4]"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce output[4+4] <- scratch[0+4]"), std::string::npos) << text;
}

}  // namespace
}  // namespace weft::sched
