// The simulator replays the hierarchical allreduce with the cluster's placement
// (accels_per_host ranks per host, shm-like links inside a host, NICs between hosts) and
// predicts it faster than the flat ring at scale: 2(H-1) inter-host steps instead of
// 2(p-1), and every rank's traffic on the NICs at once instead of one rank's per host.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "sim/collective.h"

namespace weft::sim {
namespace {

using sched::Collective;

ClusterSpec Cluster(int hosts, int accels, int nics) {
  ClusterSpec c;
  c.name = "hier";
  c.hosts = hosts;
  c.accels_per_host = accels;
  c.intra_bytes_per_s = 150e9;
  c.intra_alpha_s = 2e-6;
  c.nics_per_host = nics;
  c.nic_bytes_per_s = 12.5e9;
  c.inter_alpha_s = 10e-6;
  return c;
}

double Seconds(const ClusterSpec& cluster, size_t bytes, const std::string& algo) {
  CollectiveQuery q;
  q.coll = Collective::kAllReduce;
  q.bytes = bytes;
  q.algo = algo;
  auto r = PredictCollective(cluster, q, SymmetryMode::kAuto);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return -1;
  EXPECT_EQ(r->algorithm, algo.substr(algo.find(':') + 1));
  return r->seconds;
}

TEST(SimHierarchical, FasterThanFlatRingAtScale) {
  for (int nics : {1, 4}) {
    const ClusterSpec cluster = Cluster(8, 8, nics);
    for (size_t bytes : {size_t{1} << 20, size_t{256} << 20}) {
      const double hier = Seconds(cluster, bytes, "allreduce:hierarchical");
      const double ring = Seconds(cluster, bytes, "allreduce:ring");
      EXPECT_LT(hier, ring) << nics << " NICs per host, " << bytes << " bytes: hierarchical "
                            << hier * 1e3 << " ms, ring " << ring * 1e3 << " ms";
      std::printf("8 hosts x 8, %d NIC(s)/host, %zu MiB: hierarchical %.3f ms, ring %.3f ms\n",
                  nics, bytes >> 20, hier * 1e3, ring * 1e3);
    }
  }
}

// Without a forced algorithm the simulator asks the planner with the cluster's topology,
// as a communicator would: at 256 MiB on 8 x 8 the cost model picks hierarchical (in
// overlapping segments).
TEST(SimHierarchical, PlannerChoosesItWithTheClusterTopology) {
  CollectiveQuery q;
  q.coll = Collective::kAllReduce;
  q.bytes = size_t{256} << 20;
  auto r = PredictCollective(Cluster(8, 8, 1), q, SymmetryMode::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->algorithm, "hierarchical_pipelined");
  // One accelerator per host: nothing to gain, the flat choice stays.
  r = PredictCollective(Cluster(8, 1, 1), q, SymmetryMode::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->algorithm, "ring");
}

// The planner inside the simulator is told the cluster's figures (PlannerCostsFor): on 16
// hosts x 8 with four 100 Gbit/s NICs each it takes the hierarchical allreduce at 64 MiB
// with Rabenseifner's rails (16 hosts: their 2 lg H latencies beat the ring's 2(H-1)),
// which the simulator finds faster than the ring rails that the built-in figures (one
// 10 Gbit/s link per host, bandwidth first) make it take.
TEST(SimHierarchical, PlannerIsToldTheClustersFigures) {
  ClusterSpec c = Cluster(16, 8, 4);
  c.intra_bytes_per_s = 300e9;
  c.nic_bytes_per_s = 12.5e9;
  c.inter_alpha_s = 15e-6;
  const sched::CostModel told = PlannerCostsFor(c);
  EXPECT_DOUBLE_EQ(told.inter_links, 4);
  EXPECT_DOUBLE_EQ(told.inter_gbps, 100);
  EXPECT_DOUBLE_EQ(told.intra_gbps, 2400);
  EXPECT_DOUBLE_EQ(told.inter_alpha_us, 15);

  CollectiveQuery q;
  q.coll = Collective::kAllReduce;
  q.bytes = size_t{64} << 20;
  auto with_cluster = PredictCollective(c, q, SymmetryMode::kAuto);
  ASSERT_TRUE(with_cluster.ok()) << with_cluster.status().ToString();
  EXPECT_EQ(with_cluster->planner_costs, told.ToSpec());
  q.planner_costs = sched::CostModel{};  // a run not told its fabric
  auto built_in = PredictCollective(c, q, SymmetryMode::kAuto);
  ASSERT_TRUE(built_in.ok()) << built_in.status().ToString();
  EXPECT_EQ(with_cluster->algorithm, "hierarchical_rabenseifner_pipelined");
  EXPECT_EQ(built_in->algorithm, "hierarchical_pipelined");
  EXPECT_LT(with_cluster->seconds * 1.2, built_in->seconds)
      << "told " << with_cluster->seconds << " s, built-in " << built_in->seconds << " s";
}

}  // namespace
}  // namespace weft::sim
