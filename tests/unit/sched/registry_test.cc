#include "sched/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace weft::sched {
namespace {

TEST(RegistryTest, NamesUniquePerCollectiveAndDescribed) {
  std::set<std::pair<int, std::string>> seen;
  for (const Algorithm& a : AllAlgorithms()) {
    EXPECT_TRUE(seen.insert({static_cast<int>(a.coll), a.name}).second)
        << CollectiveName(a.coll) << ":" << a.name << " registered twice";
    EXPECT_GT(std::string(a.description).size(), 10u) << a.name;
    EXPECT_NE(a.supports, nullptr);
    EXPECT_NE(a.build, nullptr);
  }
}

TEST(RegistryTest, EveryCollectiveHasAnAlgorithmForEverySize) {
  for (int c = 0; c < kNumCollectives; ++c) {
    for (int size = 1; size <= 64; ++size) {
      bool any = false;
      for (const Algorithm& a : AllAlgorithms()) {
        if (static_cast<int>(a.coll) == c && a.supports({a.coll, 0, size, 0, 1})) any = true;
      }
      EXPECT_TRUE(any) << CollectiveName(static_cast<Collective>(c)) << " size " << size;
    }
  }
}

TEST(RegistryTest, RequiredAlgorithmsPresent) {
  const std::pair<Collective, const char*> required[] = {
      {Collective::kAllReduce, "ring"},
      {Collective::kAllReduce, "recursive_doubling"},
      {Collective::kAllReduce, "binomial"},
      {Collective::kReduce, "binomial"},
      {Collective::kReduce, "ring"},
      {Collective::kBroadcast, "binomial"},
      {Collective::kBroadcast, "ring"},
      {Collective::kAllGather, "ring"},
      {Collective::kAllGather, "recursive_doubling"},
      {Collective::kAllGather, "bruck"},
      {Collective::kReduceScatter, "ring"},
      {Collective::kReduceScatter, "pairwise"},
      {Collective::kAllToAll, "pairwise"},
      {Collective::kAllToAll, "bruck"},
      {Collective::kGather, "binomial"},
      {Collective::kGather, "linear"},
      {Collective::kScatter, "binomial"},
      {Collective::kScatter, "linear"},
      {Collective::kBarrier, "dissemination"},
  };
  for (const auto& [coll, name] : required) {
    const Algorithm* a = FindAlgorithm(coll, name);
    ASSERT_NE(a, nullptr) << CollectiveName(coll) << ":" << name;
    EXPECT_EQ(a->coll, coll);
    EXPECT_STREQ(a->name, name);
  }
}

TEST(RegistryTest, FindRejectsUnknownAndWrongCollective) {
  EXPECT_EQ(FindAlgorithm(Collective::kAllReduce, "bogus"), nullptr);
  EXPECT_EQ(FindAlgorithm(Collective::kAllReduce, "bruck"), nullptr);
  EXPECT_EQ(FindAlgorithm(Collective::kBarrier, "ring"), nullptr);
  EXPECT_EQ(FindAlgorithm(Collective::kAllReduce, ""), nullptr);
}

TEST(RegistryTest, RecursiveDoublingAllGatherNeedsPowerOfTwo) {
  const Algorithm* a = FindAlgorithm(Collective::kAllGather, "recursive_doubling");
  ASSERT_NE(a, nullptr);
  for (int size : {1, 2, 4, 8, 32, 64}) EXPECT_TRUE(a->supports({a->coll, 0, size, 0, 5}));
  for (int size : {3, 5, 6, 12, 63}) EXPECT_FALSE(a->supports({a->coll, 0, size, 0, 5}));
}

}  // namespace
}  // namespace weft::sched
