// Max-min fair sharing in the fluid network: the contention that makes the simulator
// more than a sum of alpha-beta terms.
#include "sim/fluid.h"

#include <gtest/gtest.h>

#include <vector>

namespace weft::sim {
namespace {

TEST(FluidTest, OneFlowRunsAtCapacity) {
  FluidNetwork net;
  const int link = net.AddResource(10.0);
  net.Start(100.0, &link, 1, 7);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 10.0);
  std::vector<uint64_t> done;
  net.AdvanceTo(10.0, &done);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0], 7u);
}

TEST(FluidTest, TwoFlowsOnOneLinkTakeTwiceAsLong) {
  FluidNetwork net;
  const int link = net.AddResource(10.0);
  net.Start(100.0, &link, 1, 1);
  net.Start(100.0, &link, 1, 2);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 20.0);
  std::vector<uint64_t> done;
  net.AdvanceTo(20.0, &done);
  EXPECT_EQ(done.size(), 2u);  // finished together: one batch
}

TEST(FluidTest, MaxMinGivesLeftoverToTheUnconstrainedFlow) {
  // A (cap 10) carries flows 1 and 2; B (cap 4) carries 2 and 3. B saturates first at
  // 2 each; flow 1 then gets what A has left: 8.
  FluidNetwork net;
  const int a = net.AddResource(10.0);
  const int b = net.AddResource(4.0);
  const int ab[] = {a, b};
  net.Start(80.0, &a, 1, 1);
  net.Start(20.0, ab, 2, 2);
  net.Start(20.0, &b, 1, 3);
  // Flows 2 and 3 end at t=10 (20 bytes at 2/s); flow 1 (80 at 8/s) also at 10.
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 10.0);
  std::vector<uint64_t> done;
  net.AdvanceTo(10.0, &done);
  EXPECT_EQ(done.size(), 3u);
}

TEST(FluidTest, RatesRiseWhenAFlowLeaves) {
  FluidNetwork net;
  const int link = net.AddResource(10.0);
  net.Start(50.0, &link, 1, 1);   // at 5/s: done at 10
  net.Start(150.0, &link, 1, 2);  // 50 by t=10, then 100 left at 10/s: done at 20
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 10.0);
  net.AdvanceTo(10.0, &done);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0], 1u);
  EXPECT_NEAR(net.NextCompletion(), 20.0, 1e-12);
}

}  // namespace
}  // namespace weft::sim
