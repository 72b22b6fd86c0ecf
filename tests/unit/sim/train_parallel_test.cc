// Tensor and pipeline parallelism in the training step (sim/train.h) against closed
// forms: on clusters where every message has its links to itself, the step must equal
// the alpha-beta-gamma ring formula for the tensor all-reduces, the GPipe/1F1B bubble
// formula for the pipeline, and the ring formula at the DP group's share of the NICs.
#include <gtest/gtest.h>

#include <vector>

#include "sched/registry.h"
#include "sim/collective.h"
#include "sim/engine.h"
#include "sim/train.h"

namespace weft::sim {
namespace {

constexpr double kIntraAlpha = 2e-6, kIntraBytesPerS = 100e9;
constexpr double kInterAlpha = 10e-6, kNicBytesPerS = 10e9;
constexpr double kGamma = 1e-11;

ClusterSpec Cluster(int hosts, int accels, int nics = 1) {
  ClusterSpec c;
  c.name = "test";
  c.hosts = hosts;
  c.accels_per_host = accels;
  c.intra_alpha_s = kIntraAlpha;
  c.intra_bytes_per_s = kIntraBytesPerS;
  c.nics_per_host = nics;
  c.nic_bytes_per_s = kNicBytesPerS;
  c.inter_alpha_s = kInterAlpha;
  c.reduce_s_per_byte = kGamma;
  c.copy_s_per_byte = 0;  // the closed forms count no local copies
  return c;
}

Instance Inst() {
  Instance inst;
  inst.name = "test";
  inst.figures["tflops_dense_bf16"].value = 100;
  inst.figures["efficiency"].value = 0.5;
  inst.figures["hbm_gb"].value = 80;
  return inst;
}

// Activations of 1 x 2048 x 4096 bf16 = 16 MiB: the planner's ring range, and an element
// count every tp tested divides.
ModelSpec Model(double params = 1e9, int layers = 4) {
  return ModelSpec{"m", params, layers, 4096, 2048, 1, {}};
}
constexpr double kActBytes = 2048.0 * 4096 * 2;

// One micro-batch's compute on one rank holding 1/shards of the model.
double Compute(const ModelSpec& m, double shards) {
  return m.micro_batch * m.FlopsPerSample() / (100e12 * 0.5) / shards;
}

double RingAllReduce(int p, double n, double alpha, double beta, double gamma) {
  return 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n * beta + (p - 1.0) / p * n * gamma;
}

void ExpectClose(double got, double want) { EXPECT_NEAR(got, want, want * 1e-9); }

TEST(TrainParallelTest, TensorParallelAddsFourRingAllReducesPerLayer) {
  // One host of 4 accelerators, tp 4: no DP, no pipeline. Each layer all-reduces its
  // activations twice forward and twice backward over the intra-node ring.
  TrainConfig cfg;
  cfg.tp = 4;
  cfg.grad_accum = 2;
  const ModelSpec model = Model();
  auto s = PredictStep(Cluster(1, 4), Inst(), model, cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->tp_algorithm, "ring");
  EXPECT_EQ(s->dp, 1);
  const double t = RingAllReduce(4, kActBytes, kIntraAlpha, 1 / kIntraBytesPerS, kGamma);
  ExpectClose(s->tp_allreduce_s, t);
  ExpectClose(s->step_s, 2 * (Compute(model, 4) + 4 * model.layers * t));
  ExpectClose(s->tp_comm_s, 2 * 4 * model.layers * t);
  EXPECT_DOUBLE_EQ(s->bubble_s, 0);
  EXPECT_DOUBLE_EQ(s->samples_per_step, 2);  // one DP replica, 2 micro-batches of 1
}

TEST(TrainParallelTest, PipelineBubbleFollowsGPipeAcrossHosts) {
  // 4 hosts of 1 accelerator, pp 4, 8 micro-batches: (m + p - 1) slots of forward +
  // backward of a quarter of the model, plus one activation crossing each way per slot.
  TrainConfig cfg;
  cfg.pp = 4;
  cfg.grad_accum = 8;
  const ModelSpec model = Model();
  auto s = PredictStep(Cluster(4, 1), Inst(), model, cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const double p2p = kInterAlpha + kActBytes / kNicBytesPerS;
  ExpectClose(s->p2p_s, p2p);
  const double slot = Compute(model, 4) + 2 * p2p;
  ExpectClose(s->step_s, (8 + 3) * slot);
  ExpectClose(s->bubble_s, 3 * slot);
  EXPECT_DOUBLE_EQ(s->bubble_fraction, 3.0 / 11);
  EXPECT_DOUBLE_EQ(s->samples_per_step, 8);
}

TEST(TrainParallelTest, PipelineInsideOneHostUsesTheIntraNodePort) {
  TrainConfig cfg;
  cfg.pp = 4;
  cfg.grad_accum = 4;
  const ModelSpec model = Model();
  auto s = PredictStep(Cluster(1, 4), Inst(), model, cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const double p2p = kIntraAlpha + kActBytes / kIntraBytesPerS;
  ExpectClose(s->p2p_s, p2p);
  ExpectClose(s->step_s, (4 + 3) * (Compute(model, 4) + 2 * p2p));
  // More micro-batches shrink the bubble towards zero: (p-1)/(m+p-1).
  cfg.grad_accum = 60;
  auto many = PredictStep(Cluster(1, 4), Inst(), model, cfg);
  ASSERT_TRUE(many.ok());
  EXPECT_DOUBLE_EQ(many->bubble_fraction, 3.0 / 63);
}

TEST(TrainParallelTest, DataParallelRingOverTheRemainingRanksSharesTheNics) {
  // 2 hosts x 2 accelerators, one NIC each, tp 2: dp 2, and each DP ring (ranks 0,2 and
  // 1,3) crosses the hosts at the same time as the other: half a NIC each. The shard's
  // gradients are 4 x 25 MiB buckets of fp32, each a 2-rank ring.
  TrainConfig cfg;
  cfg.tp = 2;
  const double params = 4 * 25.0 * (1 << 20) * 2 / 4;  // 4 buckets per shard of 1/2
  const ModelSpec model = Model(params);
  auto s = PredictStep(Cluster(2, 2), Inst(), model, cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dp, 2);
  EXPECT_EQ(s->algorithm, "ring");
  const double bucket = 25.0 * (1 << 20);
  const double ring = RingAllReduce(2, bucket, kInterAlpha, 2 / kNicBytesPerS, kGamma);
  ExpectClose(s->overlap.comm_total, 4 * ring);
  // The buckets overlap the backward (tensor all-reduces included) as in pure DP.
  const double tp = RingAllReduce(2, kActBytes, kIntraAlpha, 1 / kIntraBytesPerS, kGamma);
  const double fwd = Compute(model, 2) / 3 + 2 * model.layers * tp;
  const double bwd = Compute(model, 2) * 2 / 3 + 2 * model.layers * tp;
  ExpectClose(s->step_s,
              fwd + std::max(bwd, OverlapBuckets(bwd, {ring, ring, ring, ring}).comm_end));
}

TEST(TrainParallelTest, AllThreeTogether) {
  // 4 hosts x 4 accelerators: tp 2 x pp 2 x dp 4. A stage is 8 ranks = 2 hosts; each DP
  // group has 2 ranks per host on 2 hosts, with half of the host's 2 NICs' bandwidth.
  TrainConfig cfg;
  cfg.tp = 2;
  cfg.pp = 2;
  cfg.grad_accum = 4;
  const ModelSpec model = Model();
  auto s = PredictStep(Cluster(4, 4, 2), Inst(), model, cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dp, 4);
  EXPECT_DOUBLE_EQ(s->samples_per_step, 4 * 4);
  // Every rank of a host sends 1/tp of the activations across at once: 4 ranks on 2 NICs.
  ExpectClose(s->p2p_s, kInterAlpha + kActBytes / 2 * 4 / (2 * kNicBytesPerS));
  const double slot =
      Compute(model, 4) + 2 * (model.layers / 2) * 2 * s->tp_allreduce_s + 2 * s->p2p_s;
  ExpectClose(s->step_s, (4 + 1) * slot + s->overlap.exposed);
  EXPECT_GT(s->overlap.comm_total, 0);
}

// The tp DP groups of a stage, each a ring all-reduce of `bytes` over its dp ranks
// (rank d * tp + t of group t), run together on the whole cluster by the engine.
double ConcurrentDpRings(const ClusterSpec& c, int tp, size_t bytes) {
  const int world = c.ranks(), dp = world / tp;
  const sched::Algorithm* ring = sched::FindAlgorithm(sched::Collective::kAllReduce, "ring");
  EXPECT_NE(ring, nullptr);
  std::vector<sched::Schedule> all(world);
  for (int t = 0; t < tp; ++t) {
    for (int d = 0; d < dp; ++d) {
      sched::CollectiveSpec spec;
      spec.coll = sched::Collective::kAllReduce;
      spec.rank = d;
      spec.size = dp;
      spec.count = bytes / 4;
      sched::Schedule sch = ring->build(spec);
      for (sched::Round& round : sch.rounds) {
        for (sched::Step& step : round.steps) {
          if (step.peer >= 0) step.peer = step.peer * tp + t;
        }
      }
      all[d * tp + t] = std::move(sch);
    }
  }
  const Symmetry none = Symmetry::None(world);
  EngineInput in;
  in.cluster = &c;
  in.symmetry = &none;
  in.schedules = &all;
  in.elem_size = 4;
  auto r = RunEngine(in);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->seconds : -1;
}

TEST(TrainParallelTest, DpGroupClusterEqualsTheConcurrentRingsOnTheWholeCluster) {
  // The claim behind the DP group's cluster: the tp rings of a host's DP groups, running
  // together on the real cluster, take exactly as long as one ring on dp ranks with 1/tp
  // of each NIC. Checked with the engine on hosts where NICs are shared (p4d-like: 2
  // GPUs per NIC), owned (p5-like: 4 NICs per GPU), and striped.
  struct Case {
    int hosts, accels, nics, tp;
    NicPolicy policy;
  };
  const size_t bytes = 64 << 20;  // divisible by every dp below, ring range
  for (const Case& k : {Case{2, 8, 4, 2, NicPolicy::kRail}, Case{2, 8, 4, 4, NicPolicy::kRail},
                        Case{4, 4, 16, 2, NicPolicy::kRail}, Case{2, 16, 8, 4, NicPolicy::kRail},
                        Case{4, 4, 2, 2, NicPolicy::kStripe}}) {
    ClusterSpec c = Cluster(k.hosts, k.accels, k.nics);
    c.nic_policy = k.policy;
    auto layout = LayoutFor(c, k.tp, 1);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    CollectiveQuery q;
    q.bytes = bytes;
    q.algo = "ring";
    auto one = PredictCollective(layout->dp_group, q, SymmetryMode::kOff);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    ExpectClose(one->seconds, ConcurrentDpRings(c, k.tp, bytes));
  }
}

TEST(TrainParallelTest, ShardingLetsSevenBillionParametersFit) {
  Instance inst = Inst();
  inst.figures["hbm_gb"].value = 40;
  const ModelSpec llama{"llama", 6.7e9, 32, 4096, 2048, 1, {}};
  auto dp = PredictStep(Cluster(1, 8), inst, llama, TrainConfig{});
  TrainConfig cfg;
  cfg.tp = 8;
  auto tp = PredictStep(Cluster(1, 8), inst, llama, cfg);
  ASSERT_TRUE(dp.ok() && tp.ok());
  EXPECT_FALSE(dp->fits_memory);  // 107 GB of Adam state
  EXPECT_TRUE(tp->fits_memory);   // 13.4 GB per rank
}

TEST(TrainParallelTest, ImpossibleLayoutsAreRejected) {
  TrainConfig cfg;
  cfg.tp = 3;  // does not divide 4 accelerators
  EXPECT_FALSE(PredictStep(Cluster(2, 4), Inst(), Model(), cfg).ok());
  cfg.tp = 8;  // larger than a host: tensor groups stay on intra-node links
  EXPECT_FALSE(PredictStep(Cluster(2, 4), Inst(), Model(), cfg).ok());
  cfg.tp = 1;
  cfg.pp = 3;  // 8 ranks are not a multiple of 3
  EXPECT_FALSE(PredictStep(Cluster(2, 4), Inst(), Model(), cfg).ok());
  cfg.pp = 8;  // 4 layers do not split into 8 stages
  EXPECT_FALSE(PredictStep(Cluster(2, 4), Inst(), Model(), cfg).ok());
  cfg.tp = 2;
  cfg.pp = 2;  // 12 ranks: stages of 6 ranks neither fill hosts of 4 nor divide one
  auto bad = PredictStep(Cluster(3, 4), Inst(), Model(), cfg);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stage"), std::string::npos);
}

}  // namespace
}  // namespace weft::sim
