// weftCommShrink with thread ranks in one process (the store is served by this process,
// as with weftGetUniqueId): explicit lists, a split child, a rank that never takes part,
// and the failure-driven path after weftCommAbort. The real kills are in tests/mp
// (shrink_test.sh).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

class ShrinkTest : public ::testing::TestWithParam<const char*> {};

// The survivors' allreduce of their old ranks on `comm`.
int64_t SumOfOldRanks(int old_rank, weftComm_t comm) {
  int64_t v = old_rank, sum = -1;
  EXPECT_EQ(weftAllReduce(&v, &sum, 1, weftInt64, weftSum, comm), weftSuccess)
      << weftGetLastError(comm);
  return sum;
}

TEST_P(ShrinkTest, ExplicitListKeepsTheOrderAndTellsTheExcludedRank) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(4, [](int rank, weftComm_t comm) {
    const int exclude[] = {2, 0};  // any order
    weftComm_t sub = nullptr;
    weftResult_t r = weftCommShrink(comm, exclude, 2, &sub, WEFT_SHRINK_DEFAULT);
    if (rank == 0 || rank == 2) {
      EXPECT_EQ(r, weftInvalidUsage);
      EXPECT_EQ(sub, nullptr);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("exclude list"), std::string::npos)
          << weftGetLastError(comm);
    } else {
      ASSERT_EQ(r, weftSuccess) << weftGetLastError(comm);
      int n = 0, nr = -1;
      weftCommCount(sub, &n);
      weftCommUserRank(sub, &nr);
      EXPECT_EQ(n, 2);
      EXPECT_EQ(nr, rank == 1 ? 0 : 1);
      EXPECT_EQ(SumOfOldRanks(rank, sub), 1 + 3);
      weftCommDestroy(sub);
    }
    EXPECT_EQ(SumOfOldRanks(rank, comm), 0 + 1 + 2 + 3);  // the parent is still healthy
  });
}

TEST_P(ShrinkTest, SplitChildShrinksThroughItsRootsStore) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(4, [](int rank, weftComm_t comm) {
    weftComm_t sub = nullptr;
    ASSERT_EQ(weftCommSplit(comm, 0, rank, &sub), weftSuccess) << weftGetLastError(comm);
    const int exclude[] = {3};
    weftComm_t small = nullptr;
    weftResult_t r = weftCommShrink(sub, exclude, 1, &small, WEFT_SHRINK_DEFAULT);
    if (rank == 3) {
      EXPECT_EQ(r, weftInvalidUsage);
    } else {
      ASSERT_EQ(r, weftSuccess) << weftGetLastError(sub);
      EXPECT_EQ(SumOfOldRanks(rank, small), 0 + 1 + 2);
      weftCommDestroy(small);
    }
    weftCommDestroy(sub);
  });
}

// Rank 2 aborts and never calls weftCommShrink; nobody's error names it as lost (they were
// told it aborted), so the others wait WEFT_TIMEOUT for it and then leave it out.
TEST_P(ShrinkTest, ARankThatNeverTakesPartIsLeftOutAfterTheTimeout) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "2");
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&id, r] {
      weftComm_t comm = nullptr;
      ASSERT_EQ(weftCommInitRank(&comm, 3, id, r), weftSuccess) << weftGetLastError(nullptr);
      if (r == 2) {
        weftCommAbort(comm);
        return;
      }
      float x = 1, y = 0;
      EXPECT_NE(weftAllReduce(&x, &y, 1, weftFloat32, weftSum, comm), weftSuccess);
      weftComm_t sub = nullptr;
      ASSERT_EQ(weftCommShrink(comm, nullptr, 0, &sub, WEFT_SHRINK_ABORT), weftSuccess)
          << weftGetLastError(comm);
      int n = 0;
      weftCommCount(sub, &n);
      EXPECT_EQ(n, 2);
      EXPECT_EQ(SumOfOldRanks(r, sub), 0 + 1);
      weftCommDestroy(sub);
      weftCommDestroy(comm);
    });
  }
  for (auto& t : threads) t.join();
}

TEST_P(ShrinkTest, HealthyShrinkWithNothingToExcludeTwice) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(3, [](int rank, weftComm_t comm) {
    weftComm_t a = nullptr, b = nullptr;
    ASSERT_EQ(weftCommShrink(comm, nullptr, 0, &a, WEFT_SHRINK_DEFAULT), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftCommShrink(comm, nullptr, 0, &b, WEFT_SHRINK_DEFAULT), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(SumOfOldRanks(rank, a), 3);
    EXPECT_EQ(SumOfOldRanks(rank, b), 3);
    weftCommDestroy(b);
    weftCommDestroy(a);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, ShrinkTest, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace weft::testing
