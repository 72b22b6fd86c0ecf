#include "sched/planner.h"

#include <gtest/gtest.h>

#include <string>

namespace weft::sched {
namespace {

PlanRequest Request(Collective coll, int size, size_t count, size_t elem = 4, int rank = 0,
                    int root = 0) {
  return PlanRequest{CollectiveSpec{coll, rank, size, root, count}, elem};
}

std::string Chosen(const Planner& p, const PlanRequest& req) {
  auto chosen = p.Choose(req);
  EXPECT_TRUE(chosen.ok()) << chosen.status().ToString();
  return chosen.ok() ? chosen.value()->name : "";
}

Planner MustCreate(const std::string& spec) {
  auto p = Planner::Create(spec);
  EXPECT_TRUE(p.ok()) << spec << ": " << p.status().ToString();
  return p.value();
}

TEST(PlannerDefaults, SmallAndLargeMessages) {
  const Planner p = MustCreate("");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 16)), "recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 1 << 18)), "rabenseifner");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 6, 1 << 18)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 1 << 22)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kBroadcast, 8, 16)), "binomial");
  EXPECT_EQ(Chosen(p, Request(Collective::kBroadcast, 8, 1 << 20)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllToAll, 8, 16)), "bruck");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllToAll, 8, 1 << 20)), "pairwise");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 8, 16)), "recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 6, 16)), "bruck");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 6, 1 << 20)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduceScatter, 8, 16)), "recursive_halving");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduceScatter, 6, 16)), "pairwise");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduceScatter, 8, 1 << 20)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kGather, 8, 16)), "binomial");
  EXPECT_EQ(Chosen(p, Request(Collective::kScatter, 8, 1 << 20)), "linear");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduce, 8, 1 << 20)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kBarrier, 6, 0)), "dissemination");
}

TEST(PlannerDefaults, ThresholdUsesBytesNotElements) {
  const Planner p = MustCreate("");
  // 16 Ki elements: 16 KiB of int8 is small, 128 KiB of float64 is large.
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 16 << 10, 1)), "recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 16 << 10, 8)), "rabenseifner");
}

TEST(PlannerDefaults, EveryCollectiveEverySizeHasASupportedChoice) {
  const Planner p = MustCreate("");
  for (int c = 0; c < kNumCollectives; ++c) {
    for (int size = 1; size <= 64; ++size) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{1} << 22}) {
        const PlanRequest req = Request(static_cast<Collective>(c), size, count, 4, size - 1);
        auto chosen = p.Choose(req);
        ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
        EXPECT_EQ(chosen.value()->coll, req.spec.coll);
        EXPECT_TRUE(chosen.value()->supports(req.spec));
      }
    }
  }
}

TEST(PlannerOverride, BareNameAppliesWhereItExists) {
  const Planner p = MustCreate("ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 16)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kBroadcast, 8, 16)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 8, 16)), "ring");
  // alltoall has no ring: planner decides.
  EXPECT_EQ(Chosen(p, Request(Collective::kAllToAll, 8, 16)), "bruck");
}

TEST(PlannerOverride, PerCollective) {
  const Planner p = MustCreate("allreduce:binomial, broadcast:ring,alltoall:PAIRWISE");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 1 << 20)), "binomial");
  EXPECT_EQ(Chosen(p, Request(Collective::kBroadcast, 8, 16)), "ring");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllToAll, 8, 16)), "pairwise");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduce, 8, 16)), "binomial");  // default
}

TEST(PlannerOverride, LaterEntriesWin) {
  const Planner p = MustCreate("ring,allreduce:recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 1 << 20)), "recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kReduce, 8, 16)), "ring");
}

TEST(PlannerOverride, UnsupportedOverrideFallsBackToDefault) {
  const Planner p = MustCreate("allgather:recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 8, 1 << 20)), "recursive_doubling");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 6, 16)), "bruck");
  EXPECT_EQ(Chosen(p, Request(Collective::kAllGather, 6, 1 << 20)), "ring");
}

TEST(PlannerOverride, EmptyAndBlankMeanNoOverride) {
  for (const char* s : {"", "   ", ","}) {
    const Planner p = MustCreate(s);
    EXPECT_EQ(Chosen(p, Request(Collective::kAllReduce, 8, 16)), "recursive_doubling") << s;
  }
}

TEST(PlannerErrors, UnknownBareNameListsAllNames) {
  auto p = Planner::Create("rnig");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  const std::string& m = p.status().message();
  EXPECT_NE(m.find("'rnig'"), std::string::npos) << m;
  for (const Algorithm& a : AllAlgorithms()) {
    EXPECT_NE(m.find(a.name), std::string::npos) << a.name << " missing from: " << m;
  }
}

TEST(PlannerErrors, UnknownCollectiveListsCollectives) {
  auto p = Planner::Create("allreduce:ring,allredcue:ring");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  const std::string& m = p.status().message();
  EXPECT_NE(m.find("'allredcue'"), std::string::npos) << m;
  for (int c = 0; c < kNumCollectives; ++c) {
    EXPECT_NE(m.find(CollectiveName(static_cast<Collective>(c))), std::string::npos) << m;
  }
}

TEST(PlannerErrors, UnknownAlgorithmListsThatCollectivesNames) {
  auto p = Planner::Create("alltoall:ring");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  const std::string& m = p.status().message();
  EXPECT_NE(m.find("'ring'"), std::string::npos) << m;
  EXPECT_NE(m.find("pairwise"), std::string::npos) << m;
  EXPECT_NE(m.find("bruck"), std::string::npos) << m;
  EXPECT_EQ(m.find("dissemination"), std::string::npos) << "lists other collectives: " << m;
}

TEST(PlannerErrors, BadSpecIsInvalidArgument) {
  const Planner p = MustCreate("");
  EXPECT_EQ(p.Choose(Request(Collective::kAllReduce, 0, 1)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(p.Choose(Request(Collective::kAllReduce, 4, 1, 4, 4)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(p.Choose(Request(Collective::kBroadcast, 4, 1, 4, 0, 7)).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace weft::sched
