// weftGroupSimulateEnd: a group's calls are estimated, not run: their buffers stay as
// they were, the ranks stay in step (the next real call is right), and the estimate
// follows the cost model's figures (tests/unit/comm/call_estimate_test.cc has them by
// hand).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

class SimulateTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SimulateTest, EstimatesWithoutRunningAndTheRanksStayInStep) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  // Fixed figures: the estimate then depends on the call alone, not on a measurement.
  ScopedEnv costs("WEFT_COST_MODEL", "intra_alpha_us=2,intra_gbps=80");
  RunRanks(3, [](int rank, weftComm_t comm) {
    std::vector<float> small(256, 1.0f), large(1 << 22, 1.0f);
    auto estimate = [&](const std::function<void()>& calls) {
      double us = -1;
      EXPECT_EQ(weftGroupStart(), weftSuccess);
      calls();
      EXPECT_EQ(weftGroupSimulateEnd(&us), weftSuccess) << weftGetLastError(nullptr);
      return us;
    };
    const double one_small = estimate([&] {
      ASSERT_EQ(weftAllReduce(small.data(), small.data(), small.size(), weftFloat32, weftSum, comm),
                weftSuccess);
    });
    const double one_large = estimate([&] {
      ASSERT_EQ(weftAllReduce(large.data(), large.data(), large.size(), weftFloat32, weftSum, comm),
                weftSuccess);
    });
    const double two_large = estimate([&] {
      for (int i = 0; i < 2; ++i)
        ASSERT_EQ(
            weftAllReduce(large.data(), large.data(), large.size(), weftFloat32, weftSum, comm),
            weftSuccess);
    });
    EXPECT_GT(one_small, 0) << "rank " << rank;
    // 16 MiB at 10000 B/us is milliseconds, 1 KiB microseconds.
    EXPECT_GT(one_large, 100 * one_small) << "rank " << rank;
    EXPECT_NEAR(two_large, 2 * one_large, 1e-6 * one_large) << "rank " << rank;
    // Nothing ran: the buffers are as they were, and the next real call (a different
    // collective on every rank's count) pairs up with the peers'.
    EXPECT_EQ(small, std::vector<float>(256, 1.0f)) << "rank " << rank;
    EXPECT_EQ(large[12345], 1.0f) << "rank " << rank;
    ASSERT_EQ(weftAllReduce(small.data(), small.data(), small.size(), weftFloat32, weftSum, comm),
              weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(small, std::vector<float>(256, 3.0f)) << "rank " << rank;
  });
}

TEST(SimulateApiTest, MisuseIsReported) {
  double us = 0;
  EXPECT_EQ(weftGroupSimulateEnd(&us), weftInvalidUsage);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("without weftGroupStart"),
            std::string::npos);
  EXPECT_EQ(weftGroupSimulateEnd(nullptr), weftInvalidArgument);
  RunRanks(2, [](int rank, weftComm_t comm) {
    float x = 1;
    int source = -1;
    // Nested: the inner group cannot be simulated; its calls stay for the outer end.
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftAllReduce(&x, &x, 1, weftFloat32, weftSum, comm), weftSuccess);
    double inner = 0;
    EXPECT_EQ(weftGroupSimulateEnd(&inner), weftInvalidUsage);
    EXPECT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(x, 2.0f) << "rank " << rank << ": the inner group's call ran at the outer end";
    // A receive from any source has no peer to cost.
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    if (rank == 0) {
      ASSERT_EQ(weftRecvAny(&x, 1, weftFloat32, 0, &source, comm), weftSuccess);
    }
    double us = 0;
    weftResult_t r = weftGroupSimulateEnd(&us);
    if (rank == 0) {
      EXPECT_EQ(r, weftInvalidArgument);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("any source"), std::string::npos);
    } else {
      EXPECT_EQ(r, weftSuccess);
      EXPECT_EQ(us, 0.0) << "an empty group costs nothing";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, SimulateTest, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace weft::testing
