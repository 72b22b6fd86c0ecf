// The per-message endpoint overhead (engine.h): a rank posts its first send and first
// receive of a round at once and every further message o = message_overhead_s() after
// the one before. The linear gather's root receives p-1 messages in one round and the
// linear scatter's root sends p-1, so each pays (p-2)·o that one-message rounds do not;
// o is the figure the planner's cost model charges per extra message, so on a cluster
// where only latencies count the simulator and the cost model give the same times.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sched/cost_model.h"
#include "sim/collective.h"
#include "sim/engine.h"

namespace weft::sim {
namespace {

using sched::Buf;
using sched::Collective;
using sched::Schedule;
using sched::Step;
using sched::StepKind;

constexpr double kAlpha = 5e-6;
constexpr double kOverhead = 2e-6;

// One rank per host, one NIC each: intra_alpha_s plays no part in any route, so it is
// only the per-message overhead here.
ClusterSpec Flat(int p, double nic_bytes_per_s, double overhead_s) {
  ClusterSpec c;
  c.name = "flat";
  c.hosts = p;
  c.accels_per_host = 1;
  c.nics_per_host = 1;
  c.nic_bytes_per_s = nic_bytes_per_s;
  c.inter_alpha_s = kAlpha;
  c.intra_alpha_s = overhead_s;
  c.copy_s_per_byte = 0;
  return c;
}

// So fast that a message's bytes take ~1e-14 s: only latencies and overheads count, and
// the root's link is never what limits it.
constexpr double kNoBandwidthLimit = 1e18;

double Simulate(const ClusterSpec& c, Collective coll, size_t bytes, const std::string& algo) {
  CollectiveQuery q;
  q.coll = coll;
  q.bytes = bytes;
  q.algo = algo;
  auto r = PredictCollective(c, q, SymmetryMode::kOff);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return -1;
  EXPECT_EQ(r->algorithm, algo);
  return r->seconds;
}

class RootedLinearTest : public ::testing::TestWithParam<int> {};

TEST_P(RootedLinearTest, RootPaysTheOverheadOfEveryMessageBeyondTheFirst) {
  const int p = GetParam();
  const size_t bytes = static_cast<size_t>(p) * 4096;  // 4 KiB per rank
  for (Collective coll : {Collective::kGather, Collective::kScatter}) {
    const double with = Simulate(Flat(p, kNoBandwidthLimit, kOverhead), coll, bytes, "linear");
    const double without = Simulate(Flat(p, kNoBandwidthLimit, 0), coll, bytes, "linear");
    EXPECT_NEAR(without, kAlpha, 1e-12) << sched::CollectiveName(coll) << " p=" << p;
    EXPECT_NEAR(with - without, (p - 2) * kOverhead, 1e-12)
        << sched::CollectiveName(coll) << " p=" << p;
  }
}

// Messages whose bytes drain faster than the overhead never overlap at the root: the
// last one is posted (p-2)·o after the first and takes alpha + n·beta alone.
TEST_P(RootedLinearTest, SerialisedPostsKeepSmallMessagesApart) {
  const int p = GetParam();
  const double block = 4096, bytes_per_s = 10e9;  // 0.41 us per message < o
  const double t = Simulate(Flat(p, bytes_per_s, kOverhead), Collective::kGather,
                            static_cast<size_t>(block) * p, "linear");
  EXPECT_NEAR(t, (p - 2) * kOverhead + kAlpha + block / bytes_per_s, 1e-12);
}

// The overhead delays when a message may start, not its transfer: when each message
// drains slower than the root posts them, the root's link is never idle and the gather
// takes what it took without the overhead (LogP's o overlaps the network).
TEST_P(RootedLinearTest, OverheadHidesBehindABusyRootLink) {
  const int p = GetParam();
  const double block = 1 << 20, bytes_per_s = 10e9;  // 105 us per message > o
  const size_t bytes = static_cast<size_t>(block) * p;
  const double with =
      Simulate(Flat(p, bytes_per_s, kOverhead), Collective::kGather, bytes, "linear");
  EXPECT_NEAR(with, kAlpha + (p - 1) * block / bytes_per_s, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Ranks, RootedLinearTest, ::testing::Values(2, 3, 8, 16, 128));

// On a latency-only cluster the simulator's rooted times equal the planner's cost model
// (sched/cost_model.h) told the same figures: one model of the per-message cost.
TEST(MessageOverheadTest, SimulatorAndCostModelAgreeWhereOnlyLatenciesCount) {
  for (int p : {4, 16, 128}) {
    const ClusterSpec c = Flat(p, kNoBandwidthLimit, kOverhead);
    const size_t bytes = static_cast<size_t>(p) * 4096;
    sched::CollectiveSpec spec;
    spec.size = p;
    spec.count = 4096 / 4;
    spec.topology = std::make_shared<const sched::Topology>(
        sched::Topology::Contiguous(std::vector<int>(p, 1)));
    for (Collective coll : {Collective::kGather, Collective::kScatter}) {
      spec.coll = coll;
      for (const char* algo : {"linear", "binomial"}) {
        const double model_us = sched::EstimateUs(algo, spec, 4, PlannerCostsFor(c));
        ASSERT_GE(model_us, 0) << algo;
        EXPECT_NEAR(Simulate(c, coll, bytes, algo), model_us * 1e-6, 1e-11)
            << sched::CollectiveName(coll) << " " << algo << " p=" << p;
      }
    }
  }
}

// The count behind it: the first send and the first receive are free, every further
// message of the round costs o, sends and receives alike ((f-1) + (g-1) extra, as the
// cost model counts them). Rank 0 sends to 1 and 2 and receives from 3 and 4, in one
// round: its last post is 2·o after its first.
TEST(MessageOverheadTest, FirstSendAndFirstReceiveAreFreeTheRestCostOEach) {
  const ClusterSpec c = Flat(5, kNoBandwidthLimit, kOverhead);
  auto send = [](int peer) { return Step{StepKind::kSend, peer, {Buf::kInput, 0, 8}, {}}; };
  auto recv = [](int peer) { return Step{StepKind::kRecv, peer, {}, {Buf::kOutput, 0, 8}}; };
  std::vector<Schedule> s(5);
  s[0].rounds.push_back({{send(1), recv(3), send(2), recv(4)}});
  s[1].rounds.push_back({{recv(0)}});
  s[2].rounds.push_back({{recv(0)}});
  s[3].rounds.push_back({{send(0)}});
  s[4].rounds.push_back({{send(0)}});
  const Symmetry none = Symmetry::None(5);
  auto r = RunEngine({&c, &none, &s, 4});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->seconds, 2 * kOverhead + kAlpha, 1e-12);
  EXPECT_NEAR(r->first_done, kAlpha, 1e-12);  // rank 1: its message was posted first
}

}  // namespace
}  // namespace weft::sim
