// The training-step model: bucket overlap against hand-computed timelines, FLOPs
// against Kaplan's formula, costs and scaling on a cluster whose numbers are known, and
// the model catalog's checks.
#include "sim/train.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "sim/custom_cluster.h"

namespace weft::sim {
namespace {

TEST(OverlapTest, SmallBucketsHideBehindTheBackwardButTheLast) {
  // Backward 3 s, buckets ready at 1, 2, 3 s, each 0.5 s: only the last one sticks out.
  const Overlap o = OverlapBuckets(3.0, {0.5, 0.5, 0.5});
  EXPECT_DOUBLE_EQ(o.comm_total, 1.5);
  EXPECT_DOUBLE_EQ(o.comm_end, 3.5);
  EXPECT_DOUBLE_EQ(o.exposed, 0.5);
}

TEST(OverlapTest, SlowBucketsQueueOnOneStream) {
  // Ready at 1, 2, 3 s; 2 s each: 1-3, 3-5, 5-7 (each waits for the previous one).
  const Overlap o = OverlapBuckets(3.0, {2.0, 2.0, 2.0});
  EXPECT_DOUBLE_EQ(o.comm_end, 7.0);
  EXPECT_DOUBLE_EQ(o.exposed, 4.0);
  EXPECT_DOUBLE_EQ(OverlapBuckets(3.0, {}).exposed, 0.0);
}

TEST(ModelTest, FlopsFollowKaplan) {
  ModelSpec m{"t", 1e9, 10, 1000, 100, 1, {}};
  // Per token 6N + 6 l s h = 6e9 + 6e6; per sample x 100 tokens.
  EXPECT_DOUBLE_EQ(m.FlopsPerSample(), (6e9 + 6.0 * 10 * 100 * 1000) * 100);
}

TEST(ModelTest, ShippedCatalogHasTheIssueModelsWithSources) {
  auto cat = LoadShippedModels();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  for (const char* name : {"bert-large", "gpt-2", "gpt3-1.3B", "llama-7B"}) {
    const ModelSpec* m = cat->Find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_FALSE(m->sources.empty());
  }
  EXPECT_NEAR(cat->Find("bert-large")->params, 340e6, 1);
}

TEST(ModelTest, UndefinedSourceIsRejected) {
  char path[] = "/tmp/weft_models_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << R"({"sources": {}, "models": [{"name": "m", "params": 1, "layers": 1,
      "hidden": 1, "seq_len": 1, "micro_batch": 1, "sources": ["nope"]}]})";
  auto cat = LoadModels(path);
  std::remove(path);
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.status().ToString().find("nope"), std::string::npos);
}

Instance TestInstance() {
  Instance inst;
  inst.name = "test";
  inst.figures["tflops_dense_bf16"].value = 100;
  inst.figures["hbm_gb"].value = 80;
  inst.figures["price_on_demand_usd_h"].value = 36;
  inst.figures["price_spot_usd_h"].value = 12;
  inst.figures["price_capacity_block_usd_h"].value = std::nullopt;  // unpublished: skipped
  return inst;
}

// 1e9 params, 1,000 tokens per sample: 6e12 (+ attention) FLOPs, at 100 TFLOPS x 0.5.
ModelSpec TestModel() { return ModelSpec{"m", 1e9, 1, 1, 1000, 1, {}}; }

ClusterSpec Net(int nodes, double gbit) {
  CustomFigures f;
  f.nic_gbit = gbit;
  f.inter_alpha_us = 10;
  f.mem_gbps = 0;
  auto c = CustomCluster(f, nodes);
  EXPECT_TRUE(c.ok());
  return *c;
}

TEST(TrainTest, OneRankIsComputeAndPricesFollowTheStep) {
  TrainConfig cfg;
  cfg.efficiency = 0.5;
  auto s = PredictStep(Net(1, 100), TestInstance(), TestModel(), cfg);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const double compute = TestModel().FlopsPerSample() / 50e12;
  EXPECT_DOUBLE_EQ(s->step_s, compute);
  EXPECT_DOUBLE_EQ(s->overlap.comm_total, 0);
  EXPECT_DOUBLE_EQ(s->usd_per_step.at("on_demand"), 36 * compute / 3600);
  EXPECT_DOUBLE_EQ(s->usd_per_million_samples.at("spot"), 12 * compute / 3600 * 1e6);
  EXPECT_EQ(s->usd_per_step.count("capacity_block"), 0u);
  EXPECT_TRUE(s->fits_memory);  // 16 GB of state in 80 GB
}

TEST(TrainTest, ShippedPurchaseOptionsScaleTheSameStep) {
  // p4d has on-demand, spot and Capacity Block prices: each option costs the same step at
  // its own hourly rate; options without a published figure give no cost at all.
  auto cat = LoadShippedCatalog();
  ASSERT_TRUE(cat.ok());
  const Instance& p4d = *cat->Find("p4d.24xlarge");
  auto c = ClusterFor(p4d, 1);
  ASSERT_TRUE(c.ok());
  auto s = PredictStep(*c, p4d, TestModel(), TrainConfig{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->usd_per_step.at("capacity_block"), 14.75 * s->step_s / 3600);
  EXPECT_NEAR(
      s->usd_per_million_samples.at("capacity_block") / s->usd_per_million_samples.at("on_demand"),
      14.75 / 32.77, 1e-12);
  EXPECT_EQ(s->usd_per_step.count("spot"), 1u);
  EXPECT_EQ(s->usd_per_step.count("savings_plan_1yr"), 0u);
}

TEST(TrainTest, P3SpotPriceIsCosted) {
  // p3.16xlarge has a dated spot price (SkyPilot, 2022-03-01) next to its On-Demand one:
  // both are costed, in the ratio of the two rates; no Savings Plan rate is published.
  auto cat = LoadShippedCatalog();
  ASSERT_TRUE(cat.ok());
  const Instance& p3 = *cat->Find("p3.16xlarge");
  auto c = ClusterFor(p3, 1);
  ASSERT_TRUE(c.ok());
  auto s = PredictStep(*c, p3, TestModel(), TrainConfig{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->usd_per_step.at("spot"), 7.344 * s->step_s / 3600);
  EXPECT_NEAR(s->usd_per_million_samples.at("spot") / s->usd_per_million_samples.at("on_demand"),
              7.344 / 24.48, 1e-12);
  EXPECT_EQ(s->usd_per_step.count("savings_plan_1yr"), 0u);
  EXPECT_EQ(s->usd_per_step.count("capacity_block"), 0u);
}

TEST(EfficiencyTest, OverrideThenCatalogThenDefault) {
  Instance inst = TestInstance();
  TrainConfig cfg;
  EXPECT_DOUBLE_EQ(EfficiencyFor(inst, cfg).value, kDefaultEfficiency);
  EXPECT_EQ(EfficiencyFor(inst, cfg).origin, "default (no catalog figure)");
  inst.figures["efficiency"].value = 0.25;
  inst.figures["efficiency"].status = "derived";
  EXPECT_DOUBLE_EQ(EfficiencyFor(inst, cfg).value, 0.25);
  EXPECT_EQ(EfficiencyFor(inst, cfg).origin, "catalog (derived)");
  cfg.efficiency = 0.6;
  EXPECT_DOUBLE_EQ(EfficiencyFor(inst, cfg).value, 0.6);
  EXPECT_EQ(EfficiencyFor(inst, cfg).origin, "override");
}

TEST(EfficiencyTest, StepComputeFollowsTheInstanceFactor) {
  // Same model and peak, catalog efficiency 0.25 vs 0.5: compute time doubles exactly.
  Instance slow = TestInstance(), fast = TestInstance();
  slow.figures["efficiency"].value = 0.25;
  fast.figures["efficiency"].value = 0.5;
  auto a = PredictStep(Net(1, 100), slow, TestModel(), TrainConfig{});
  auto b = PredictStep(Net(1, 100), fast, TestModel(), TrainConfig{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->compute_s, TestModel().FlopsPerSample() / (100e12 * 0.25));
  EXPECT_DOUBLE_EQ(a->step_s, 2 * b->step_s);
  EXPECT_DOUBLE_EQ(a->efficiency.value, 0.25);
  slow.figures["efficiency"].value = 1.5;  // out of range, from a hand-made instance
  EXPECT_FALSE(PredictStep(Net(1, 100), slow, TestModel(), TrainConfig{}).ok());
}

TEST(EfficiencyTest, CommandLineForms) {
  auto all = ParseEfficiencyOverride("0.4");
  ASSERT_TRUE(all.ok());
  EXPECT_DOUBLE_EQ(*all->For("anything"), 0.4);
  auto some = ParseEfficiencyOverride("p4d.24xlarge=0.45,trn1.32xlarge=0.3");
  ASSERT_TRUE(some.ok());
  EXPECT_DOUBLE_EQ(*some->For("p4d.24xlarge"), 0.45);
  EXPECT_DOUBLE_EQ(*some->For("trn1.32xlarge"), 0.3);
  EXPECT_FALSE(some->For("p5.48xlarge").has_value());  // keeps the catalog's
  auto mixed = ParseEfficiencyOverride("0.4,trn1.32xlarge=0.3");
  ASSERT_TRUE(mixed.ok());
  EXPECT_DOUBLE_EQ(*mixed->For("trn1.32xlarge"), 0.3);
  EXPECT_DOUBLE_EQ(*mixed->For("p5.48xlarge"), 0.4);
  EXPECT_FALSE(ParseEfficiencyOverride("").value().all.has_value());
  for (const char* bad : {"0", "1.5", "abc", "0.4x", "=0.3", "p4d.24xlarge=", "p4d=-1"}) {
    EXPECT_FALSE(ParseEfficiencyOverride(bad).ok()) << bad;
  }
}

TEST(EfficiencyTest, ShippedFactorsMatchTheirPublishedThroughputs) {
  // The derived factors are published BERT-Large phase-1 throughputs (seq 128) times the
  // model's FLOPs per sample over peak: recomputing them checks data and formula agree.
  auto cat = LoadShippedCatalog();
  auto models = LoadShippedModels();
  ASSERT_TRUE(cat.ok() && models.ok());
  const double flops = models->Find("bert-large")->FlopsPerSample();
  const auto check = [&](const char* name, double samples_per_s, double chips) {
    const Instance& inst = *cat->Find(name);
    const double derived = samples_per_s * flops / (chips * inst.Get("tflops_dense_bf16") * 1e12);
    EXPECT_NEAR(inst.Get("efficiency"), derived, 0.0015) << name;
    EXPECT_EQ(EfficiencyFor(inst, TrainConfig{}).origin, "catalog (derived)") << name;
  };
  check("p4d.24xlarge", 580, 1);     // DGX A100, 1 GPU
  check("p3dn.24xlarge", 224, 1);    // DGX-1 V100 32G, 1 GPU
  check("trn1.32xlarge", 3705, 16);  // one trn1.32xlarge
  for (const Instance& inst : cat->instances) {
    ASSERT_EQ(inst.figures.count("efficiency"), 1u) << inst.name;
    EXPECT_FALSE(inst.figures.at("efficiency").sources.empty()) << inst.name;
  }
}

TEST(TrainTest, SlowNetworkExposesCommunicationAndCutsScaling) {
  TrainConfig cfg;
  cfg.efficiency = 0.5;
  auto fast = PredictStep(Net(4, 1e5), TestInstance(), TestModel(), cfg);
  auto slow = PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg);
  auto one = PredictStep(Net(1, 10), TestInstance(), TestModel(), cfg);
  ASSERT_TRUE(fast.ok() && slow.ok() && one.ok());
  // 4 GB of gradients over a 10 Gbit/s ring: 2 (3/4) 4e9 / 1.25e9 = 4.8 s of all-reduce
  // against 0.12 s of compute.
  EXPECT_NEAR(slow->overlap.comm_total, 4.8, 0.1);
  EXPECT_NEAR(slow->step_s, slow->compute_s / 3 + slow->overlap.comm_end, 1e-12);
  EXPECT_LT(slow->samples_per_s / (4 * one->samples_per_s), 0.05);
  // A 100 Tbit/s network hides all but a sliver of the last bucket.
  EXPECT_GT(fast->samples_per_s / (4 * one->samples_per_s), 0.99);
  EXPECT_EQ(slow->algorithm, "ring");
}

TEST(TrainTest, AccumulationAmortisesTheAllReduce) {
  TrainConfig cfg;
  cfg.efficiency = 0.5;
  auto a1 = PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg);
  cfg.grad_accum = 8;
  auto a8 = PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg);
  ASSERT_TRUE(a1.ok() && a8.ok());
  EXPECT_DOUBLE_EQ(a8->samples_per_step, 8 * a1->samples_per_step);
  EXPECT_NEAR(a8->step_s - a1->step_s, 7 * a1->compute_s, 1e-9);  // same all-reduces
}

TEST(TrainTest, SevenBillionParametersNeedShardingOnFortyGigabytes) {
  Instance inst = TestInstance();
  inst.figures["hbm_gb"].value = 40;
  ModelSpec m = TestModel();
  m.params = 6.7e9;
  auto s = PredictStep(Net(1, 100), inst, m, TrainConfig{});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->fits_memory);
}

// A forced algorithm (WEFT_ALGO syntax) runs every all-reduce of the step; a name that
// no allreduce has is an error, not a silent default.
TEST(TrainTest, ForcedAlgorithmRunsTheBuckets) {
  TrainConfig cfg;
  cfg.efficiency = 0.5;
  auto planner = PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg);
  cfg.algo = "allreduce:recursive_doubling";
  auto forced = PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg);
  ASSERT_TRUE(planner.ok() && forced.ok());
  EXPECT_EQ(planner->algorithm, "ring");
  EXPECT_EQ(forced->algorithm, "recursive_doubling");
  // lg 4 = 2 exchanges of the whole gradients against the ring's 2 (3/4) of them: 4/3 the
  // bytes on a bandwidth-bound network.
  EXPECT_NEAR(forced->overlap.comm_total / planner->overlap.comm_total, 4.0 / 3, 0.05);
  cfg.algo = "allreduce:no_such_algorithm";
  EXPECT_FALSE(PredictStep(Net(4, 10), TestInstance(), TestModel(), cfg).ok());
}

TEST(TrainTest, BadConfigIsRejected) {
  TrainConfig cfg;
  cfg.grad_bytes = 3;
  EXPECT_FALSE(PredictStep(Net(2, 10), TestInstance(), TestModel(), cfg).ok());
}

}  // namespace
}  // namespace weft::sim
