// Alpha fitting and custom clusters: exact recovery of a planted alpha, the clamp at
// zero, and the custom-cluster figures (required NIC, unknown keys rejected).
#include "sim/fit.h"

#include <gtest/gtest.h>

#include "sim/collective.h"
#include "sim/custom_cluster.h"

namespace weft::sim {
namespace {

TEST(FitAlphaTest, RecoversAPlantedAlpha) {
  const double a = 73e-6;
  std::vector<AlphaSample> s;
  for (double k : {2.0, 4.0, 14.0}) s.push_back({k, k * 1e-5, k * a + k * 1e-5});
  EXPECT_NEAR(FitAlpha(s), a, 1e-12);
}

TEST(FitAlphaTest, RelativeWeightsAndClamp) {
  // Two samples that disagree: the relative fit sits between them, closer to neither
  // by absolute size. m = 2a at a=10 and at a=30 -> minimiser of ((2a-20)/20)^2 +
  // ((2a-60)/60)^2 is a = 12.
  EXPECT_NEAR(FitAlpha({{2, 0, 20}, {2, 0, 60}}), 12, 1e-9);
  EXPECT_EQ(FitAlpha({{2, 50, 20}}), 0);  // the bandwidth terms alone overshoot
  EXPECT_EQ(FitAlpha({}), 0);
  EXPECT_EQ(FitAlpha({{0, 1, 2}}), 0);  // nothing depends on alpha
}

TEST(FitAlphaTest, SimulatedTimeIsAffineInAlpha) {
  // The fit's premise, checked on weft's ring allreduce (4 hosts, 1 MiB): the slope is
  // the ring's 2(p-1) = 6 latencies, and a third alpha lies on the line.
  CustomFigures f;
  f.nic_gbit = 1;
  auto c = CustomCluster(f, 4);
  ASSERT_TRUE(c.ok());
  CollectiveQuery q;
  q.bytes = 1 << 20;
  q.algo = "ring";
  auto at = [&](double alpha) {
    ClusterSpec x = *c;
    x.inter_alpha_s = alpha;
    return PredictCollective(x, q)->seconds;
  };
  const double k = (at(100e-6) - at(0)) / 100e-6;
  EXPECT_NEAR(k, 6, 1e-6);
  EXPECT_NEAR(at(37e-6), at(0) + k * 37e-6, 1e-12);
}

TEST(CustomClusterTest, FiguresBecomeTheModel) {
  auto f = ParseCustomFigures(R"({"name": "bed", "nic_gbit": 8, "inter_alpha_us": 40,
                                  "accels_per_host": 2, "mem_gbps": 10})");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto c = CustomCluster(*f, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->name, "bed");
  EXPECT_EQ(c->ranks(), 6);
  EXPECT_DOUBLE_EQ(c->nic_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(c->inter_alpha_s, 40e-6);
  EXPECT_DOUBLE_EQ(c->reduce_s_per_byte, 3 / 10e9);
}

TEST(CustomClusterTest, MistakesAreErrors) {
  EXPECT_FALSE(CustomCluster(CustomFigures{}, 2).ok());  // no NIC bandwidth
  auto typo = ParseCustomFigures(R"({"nic_gbits": 8})");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().ToString().find("nic_gbits"), std::string::npos);
  EXPECT_FALSE(ParseCustomFigures(R"({"nic_gbit": "8"})").ok());
  EXPECT_FALSE(ParseCustomFigures("[1]").ok());
}

}  // namespace
}  // namespace weft::sim
