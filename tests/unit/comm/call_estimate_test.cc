// What weftGroupSimulateEnd reports: the planner's algorithm's estimate per collective,
// added up, and one step for a group's sends and receives. Figures by hand on 2 hosts x
// 2 ranks under the default cost model (intra 2 us, 10000 B/us; inter 25 us, 1250 B/us
// over one link per host).
#include "comm/call_estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace weft::comm {
namespace {

using sched::Collective;
using ::testing::HasSubstr;

CallEstimator On2x2(int rank, const std::string& algo = "") {
  auto topology = std::make_shared<const sched::Topology>(sched::Topology::Contiguous({2, 2}));
  return CallEstimator(rank, 4, sched::Planner::Create(algo, sched::CostModel()).value(), topology);
}

Call AllReduce(size_t count) {
  return MakeCollective(Collective::kAllReduce, nullptr, nullptr, count, DataType::kFloat32);
}

TEST(CallEstimator, ACollectiveCostsItsAlgorithmsSteps) {
  // The ring, forced: 2(p-1) steps of a quarter (1e6 bytes), each crossing one host link
  // per direction.
  const CallEstimator ring = On2x2(0, "allreduce:ring");
  EXPECT_NEAR(ring.EstimateUs({AllReduce(1'000'000)}).value(), 6 * (25 + 1e6 / 1250), 1e-6);
  // Collectives run one after another: their times add up.
  EXPECT_NEAR(ring.EstimateUs({AllReduce(1'000'000), AllReduce(1'000'000)}).value(),
              12 * (25 + 1e6 / 1250), 1e-6);
  // The barrier: empty messages to r+1, then r+2, an inter latency each.
  EXPECT_NEAR(ring.EstimateUs({MakeBarrier()}).value(), 25 + 25, 1e-9);
}

TEST(CallEstimator, TheChoiceIsThePlannersOwn) {
  // Unforced, the planner weighs every algorithm on 2 x 2 and takes the cheapest: the
  // estimate is that one's, so no forced algorithm is cheaper.
  const double chosen = On2x2(1).EstimateUs({AllReduce(1 << 20)}).value();
  for (const char* name : {"ring", "recursive_doubling", "rabenseifner", "hierarchical"}) {
    const double forced =
        On2x2(1, std::string("allreduce:") + name).EstimateUs({AllReduce(1 << 20)}).value();
    EXPECT_LE(chosen, forced + 1e-9) << name;
  }
}

TEST(CallEstimator, SendsAndReceivesAreOneStep) {
  // Rank 0 sends 1e6 bytes to rank 2 (over the host link) and receives 1e3 from rank 1
  // (shm) at once: the step lasts as long as the inter message, each costed at the
  // largest size.
  const CallEstimator e = On2x2(0);
  std::vector<Call> calls = {
      MakePointToPoint(CallKind::kSend, nullptr, nullptr, 1'000'000, DataType::kUint8, 2),
      MakePointToPoint(CallKind::kRecv, nullptr, nullptr, 1'000, DataType::kUint8, 1)};
  EXPECT_NEAR(e.EstimateUs(calls).value(), 25 + 1e6 / 1250, 1e-6);
  // With a collective after them: the two add.
  calls.push_back(MakeBarrier());
  EXPECT_NEAR(e.EstimateUs(calls).value(), 25 + 1e6 / 1250 + 50, 1e-6);
}

TEST(CallEstimator, AReceiveFromAnySourceIsRefused) {
  Call any = MakePointToPoint(CallKind::kRecv, nullptr, nullptr, 8, DataType::kUint8, kAnySource);
  auto r = On2x2(3).EstimateUs({any});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("any source"));
}

}  // namespace
}  // namespace weft::comm
