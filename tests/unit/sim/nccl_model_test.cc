// The NCCL reference model (sim/nccl_model.h): its bandwidth limits against the byte
// counts worked out by hand, the protocol and algorithm choice at the extremes, the fit
// recovering planted figures, and the published-data loader.
#include "sim/nccl_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "sim/data_dir.h"

namespace weft::sim {
namespace {

// 8 accelerators per host, 4 x 12.5 GB/s NICs (50 GB/s a host), 300 GB/s NVLink.
ClusterSpec Hosts(int hosts) {
  ClusterSpec c;
  c.hosts = hosts, c.accels_per_host = 8, c.nics_per_host = 4;
  c.nic_bytes_per_s = 12.5e9, c.intra_bytes_per_s = 300e9;
  return c;
}

double BusBw(const ClusterSpec& c, double bytes, double t) {
  const int n = c.ranks();
  return bytes / t * 2.0 * (n - 1) / n;
}

TEST(NcclModelTest, RingIsLimitedByTheHostsNics) {
  NcclFigures f;
  f.nic_fraction = 0.5;
  const ClusterSpec c = Hosts(4);
  const double s = 1e13;  // latency negligible
  const double t = NcclAllreduceTime(c, f, NcclAlgo::kRing, NcclProto::kSimple, s);
  EXPECT_NEAR(BusBw(c, s, t), 25e9, 25e9 * 1e-4);  // 50 GB/s x 0.5
  const double ll = NcclAllreduceTime(c, f, NcclAlgo::kRing, NcclProto::kLL, s);
  EXPECT_NEAR(ll / t, 2.0, 1e-3);  // LL carries half a line
}

TEST(NcclModelTest, TwoHostTreeSendsHalfTheRingsBytes) {
  // Between 2 hosts the tree sends the buffer once each way per host, the ring 2(n-1)/n
  // of it: 1.875x at 16 ranks, less the tree's 0.92.
  NcclFigures f;
  const ClusterSpec c = Hosts(2);
  const double s = 1e13;
  const double ring = NcclAllreduceTime(c, f, NcclAlgo::kRing, NcclProto::kSimple, s);
  const double tree = NcclAllreduceTime(c, f, NcclAlgo::kTree, NcclProto::kSimple, s);
  EXPECT_NEAR(ring / tree, 1.875 * 0.92, 1e-3);
  EXPECT_EQ(PredictNcclAllreduce(c, f, s).algo, NcclAlgo::kTree);
}

TEST(NcclModelTest, SmallMessagesTakeLLAndNvlsNeedsTheFlag) {
  NcclFigures f;
  const ClusterSpec c = Hosts(8);
  EXPECT_EQ(PredictNcclAllreduce(c, f, 8).proto, NcclProto::kLL);
  for (double s : {1e3, 1e6, 1e9, 1e12}) EXPECT_NE(PredictNcclAllreduce(c, f, s).algo, NcclAlgo::kNvlsTree);
  f.nvls = true, f.nvlink_fraction = 0.1;  // NVLink the bottleneck: NVLS halves its bytes
  EXPECT_EQ(PredictNcclAllreduce(c, f, 1e12).algo, NcclAlgo::kNvlsTree);
}

TEST(NcclModelTest, FitReproducesPlantedFigures) {
  NcclFigures planted;
  planted.base_us = 40, planted.net_hop_us = 60, planted.nvlink_hop_us = 5;
  planted.nic_fraction = 0.8, planted.nvlink_fraction = 0.6, planted.nvls = true;
  std::vector<NcclSample> samples;
  for (int hosts : {2, 4, 8})
    for (double s = 1 << 20; s <= 8.0 * (1 << 30); s *= 4)
      samples.push_back({Hosts(hosts), s, PredictNcclAllreduce(Hosts(hosts), planted, s).busbw_gbps});
  const NcclFigures fitted = FitNcclFigures(samples, true);
  for (const NcclSample& x : samples)
    EXPECT_NEAR(PredictNcclAllreduce(x.cluster, fitted, x.bytes).busbw_gbps / x.busbw_gbps, 1, 0.01)
        << x.cluster.hosts << " hosts, " << x.bytes << " B";
  EXPECT_NEAR(fitted.nic_fraction, 0.8, 0.01);
}

TEST(NcclModelTest, LoadsTheShippedDataAndRejectsBadRows) {
  Result<std::string> shipped = ShippedDataPath("calibration/published.csv");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  Result<std::vector<PublishedRow>> rows = LoadPublished(shipped.value());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_GE(rows->size(), 75u);
  for (const PublishedRow& r : *rows) EXPECT_GT(r.busbw_gbps, 0) << r.source_id;
  const std::string path = testing::TempDir() + "/nccl_bad.csv";
  std::ofstream(path) << "header\na,b,p5.48xlarge,2,16,allreduce,1024,1.0,,,train,\n";
  EXPECT_FALSE(LoadPublished(path).ok());  // role must be fit or holdout
  std::ofstream(path) << "header\na,b,p5.48xlarge,2\n";
  EXPECT_FALSE(LoadPublished(path).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace weft::sim
