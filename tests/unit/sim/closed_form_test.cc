// On an uncontended cluster (one accelerator per host, one NIC each, non-blocking
// fabric) every message of these algorithms has a NIC to itself, so the simulated time
// must equal the alpha-beta-gamma closed forms of reference/collective-costs.md:
// p ranks, n bytes, alpha per message, beta s/byte, gamma s/byte reduced.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/collective.h"

namespace weft::sim {
namespace {

using sched::Collective;

constexpr double kAlpha = 5e-6;
constexpr double kBytesPerS = 10e9;  // beta = 1e-10 s/B
constexpr double kBeta = 1.0 / kBytesPerS;
constexpr double kGamma = 2e-11;

ClusterSpec Flat(int p) {
  ClusterSpec c;
  c.name = "flat";
  c.hosts = p;
  c.accels_per_host = 1;
  c.nics_per_host = 1;
  c.nic_bytes_per_s = kBytesPerS;
  c.inter_alpha_s = kAlpha;
  c.reduce_s_per_byte = kGamma;
  c.copy_s_per_byte = 0;  // the closed forms count no local copies
  return c;
}

double Simulate(int p, Collective coll, size_t bytes, const std::string& algo,
                SymmetryMode mode = SymmetryMode::kOff) {
  CollectiveQuery q;
  q.coll = coll;
  q.bytes = bytes;
  q.algo = algo;
  auto r = PredictCollective(Flat(p), q, mode);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return -1;
  EXPECT_EQ(r->algorithm, algo);
  return r->seconds;
}

double Lg(int p) { return std::log2(static_cast<double>(p)); }

// Relative tolerance: the engine adds the same doubles in a different order.
void ExpectClose(double got, double want) { EXPECT_NEAR(got, want, want * 1e-9); }

class ClosedFormTest : public ::testing::TestWithParam<int> {};

// 4 MiB of float32: divisible by every p tested, so chunks are equal.
constexpr size_t kBytes = 4 << 20;

TEST_P(ClosedFormTest, RingAllReduce) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kAllReduce, kBytes, "ring"),
              2 * (p - 1) * kAlpha + 2.0 * (p - 1) / p * n * kBeta + (p - 1.0) / p * n * kGamma);
}

TEST_P(ClosedFormTest, RecursiveDoublingAllReduce) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kAllReduce, kBytes, "recursive_doubling"),
              Lg(p) * kAlpha + n * Lg(p) * kBeta + n * Lg(p) * kGamma);
}

TEST_P(ClosedFormTest, RabenseifnerAllReduce) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kAllReduce, kBytes, "rabenseifner"),
              2 * Lg(p) * kAlpha + 2.0 * (p - 1) / p * n * kBeta + (p - 1.0) / p * n * kGamma);
}

TEST_P(ClosedFormTest, BinomialBroadcast) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kBroadcast, kBytes, "binomial"),
              Lg(p) * kAlpha + n * Lg(p) * kBeta);
}

TEST_P(ClosedFormTest, RingAllGather) {
  const int p = GetParam();
  const double n = kBytes;  // total gathered
  ExpectClose(Simulate(p, Collective::kAllGather, kBytes, "ring"),
              (p - 1) * kAlpha + (p - 1.0) / p * n * kBeta);
}

TEST_P(ClosedFormTest, RecursiveDoublingAllGather) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kAllGather, kBytes, "recursive_doubling"),
              Lg(p) * kAlpha + (p - 1.0) / p * n * kBeta);
}

TEST_P(ClosedFormTest, RingReduceScatter) {
  const int p = GetParam();
  const double n = kBytes;  // total input
  ExpectClose(Simulate(p, Collective::kReduceScatter, kBytes, "ring"),
              (p - 1) * kAlpha + (p - 1.0) / p * n * kBeta + (p - 1.0) / p * n * kGamma);
}

TEST_P(ClosedFormTest, RecursiveHalvingReduceScatter) {
  const int p = GetParam();
  const double n = kBytes;
  ExpectClose(Simulate(p, Collective::kReduceScatter, kBytes, "recursive_halving"),
              Lg(p) * kAlpha + (p - 1.0) / p * n * kBeta + (p - 1.0) / p * n * kGamma);
}

TEST_P(ClosedFormTest, PairwiseAllToAll) {
  const int p = GetParam();
  const double n = kBytes;  // total a rank sends, its own block included
  // (p-1) steps of one block n/p each: the table's (p-1)alpha + n beta counts the own
  // block too; the schedule does not send it, so (p-1)/p n beta.
  ExpectClose(Simulate(p, Collective::kAllToAll, kBytes, "pairwise"),
              (p - 1) * kAlpha + (p - 1.0) / p * n * kBeta);
}

TEST_P(ClosedFormTest, SymmetryShortcutGivesTheSameTimes) {
  const int p = GetParam();
  for (const char* algo : {"ring", "recursive_doubling", "rabenseifner"}) {
    ExpectClose(Simulate(p, Collective::kAllReduce, kBytes, algo, SymmetryMode::kAuto),
                Simulate(p, Collective::kAllReduce, kBytes, algo, SymmetryMode::kOff));
  }
}

INSTANTIATE_TEST_SUITE_P(PowersOfTwo, ClosedFormTest, ::testing::Values(2, 4, 8, 16, 64));

TEST(ClosedFormNonPow2Test, RingAllReduceOnSixRanks) {
  const int p = 6;
  const size_t bytes = 6 * 4 * 1000;
  const double n = bytes;
  ExpectClose(Simulate(p, Collective::kAllReduce, bytes, "ring"),
              2 * (p - 1) * kAlpha + 2.0 * (p - 1) / p * n * kBeta + (p - 1.0) / p * n * kGamma);
}

}  // namespace
}  // namespace weft::sim
