// The data-parallel training step: compute from FLOPs, gradient buckets all-reduced
// (with the simulator's predictions of weft's own schedules) overlapping the backward
// pass, as PyTorch DDP does.
//
//   FLOPs per sample = seq_len * (6 params + 6 layers seq_len hidden)   (Kaplan et al.)
//   compute per micro-batch C = micro_batch * FLOPs / (peak * efficiency)
// efficiency (model FLOPs utilisation) is per accelerator type: the catalog's
// "efficiency" figure, overridable per instance from the command line (EfficiencyFor).
//   forward = C/3, backward = 2C/3 (the backward computes two matmuls per forward one)
// Gradients (params * grad_bytes) are cut into buckets of bucket_bytes in the order the
// backward produces them (last layer first); bucket j is ready when a (j+1)/n share of
// the backward has run (gradients come out at a uniform rate), and the all-reduces run
// one at a time in bucket order, each as soon as it is ready and the previous one is
// done (one communication stream, as DDP/NCCL). With grad_accum A > 1 the first A-1
// micro-batches only accumulate (DDP no_sync), so only the last backward overlaps.
//   step = (A-1)(F+B) + F + max(B, end of the last all-reduce after the backward began)
//
// Tensor and pipeline parallelism (tp, pp; Megatron-LM style), ranks laid out with tp
// fastest, then data parallel, then pp: rank = (stage * dp + d) * tp + t, so a tensor
// group is tp consecutive accelerators of one host and a stage is dp*tp consecutive
// ranks. With m = grad_accum micro-batches per step, on each rank:
//   F = C/3/(tp pp) + 2 (layers/pp) t_tp      B = 2C/3/(tp pp) + 2 (layers/pp) t_tp
// t_tp: one all-reduce of the activations (micro_batch seq hidden x 2 bytes) over the
// tp ranks of a host (intra-node links; Megatron does 2 per layer forward, 2 backward,
// on the critical path); t_p2p: one stage boundary crossing of 1/tp of the activations
// (Megatron's scatter/gather; the all-gather after it is not modelled), over the
// intra-node port or, when a boundary crosses hosts, over the rank's share of the host's
// NICs (every rank sends at once: nics * nic_bw / accels), the slowest boundary for all;
//   slot = F + B + 2 t_p2p (pp > 1)            pipeline = (m + pp - 1) slot
// (GPipe and non-interleaved 1F1B have the same bubble: (pp-1)/(m+pp-1) of the
// pipeline). Gradients of params/(tp pp) per rank are all-reduced over the dp ranks that
// hold the same shard (the other tp groups' rings share the host's NICs at the same
// time, so each DP group gets 1/tp of them), in buckets overlapped with the last
// backward of stage 0 (which ends the pipeline):
//   step = pipeline + max(0, end of the last bucket - B)
// With tp = pp = 1 this is the data-parallel step above.
// Not modelled: the optimizer update, data loading, compute slowed by communication
// (shared HBM/SMs), stragglers, interleaved pipeline schedules, sequence/context
// parallelism, embedding layers off the even split.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/catalog.h"
#include "sim/cluster.h"

namespace weft::sim {

struct ModelSpec {
  std::string name;
  double params = 0;
  int layers = 0;
  int hidden = 0;
  int seq_len = 0;
  int micro_batch = 1;  // samples per replica (per accelerator when tp = pp = 1) per pass
  std::vector<std::string> sources;

  double FlopsPerSample() const;
};

struct ModelCatalog {
  std::map<std::string, Source> sources;
  std::vector<ModelSpec> models;
  const ModelSpec* Find(const std::string& name) const;
};
Result<ModelCatalog> LoadModels(const std::string& path);
// LoadModels of the shipped model catalog (catalog/models.json, found as data_dir.h says).
Result<ModelCatalog> LoadShippedModels();

// The efficiency when neither the configuration nor the catalog gives one: the trn1
// BERT-Large calibration of SIMULATOR.md, an assumption for any other accelerator.
inline constexpr double kDefaultEfficiency = 0.32;

struct TrainConfig {
  // Achieved / peak dense FLOPs. Absent: the instance's catalog figure "efficiency", else
  // kDefaultEfficiency.
  std::optional<double> efficiency;
  double bucket_bytes = 25.0 * (1 << 20);  // DDP's bucket_cap_mb default
  int grad_bytes = 4;                      // fp32 gradients (DDP with AMP); 2 for bf16
  int grad_accum = 1;                      // micro-batches per step (pp: in the pipeline)
  int tp = 1;                              // tensor-parallel ranks (within a host)
  int pp = 1;                              // pipeline stages
  // Forces the all-reduces' algorithm, WEFT_ALGO syntax ("ring", "allreduce:rabenseifner");
  // empty: the planner's choice, as the library would make it.
  std::string algo;
};

// The efficiency a step on `inst` uses, and where it comes from: "override" (cfg),
// "catalog (<status>)" or "default (no catalog figure)".
struct Efficiency {
  double value = kDefaultEfficiency;
  std::string origin;
};
Efficiency EfficiencyFor(const Instance& inst, const TrainConfig& cfg);

// Command-line efficiencies: "0.4" applies to every instance; "p4d.24xlarge=0.45,
// trn1.32xlarge=0.3" to those instances only (others keep the catalog's); both forms may
// be mixed ("0.4,trn1.32xlarge=0.3": the named ones win). Values must be in (0, 1].
struct EfficiencyOverride {
  std::optional<double> all;
  std::map<std::string, double> per_instance;
  std::optional<double> For(const std::string& instance) const;
};
Result<EfficiencyOverride> ParseEfficiencyOverride(const std::string& text);

// Forward, backward and the overlapped all-reduces of one micro-batch (seconds).
struct Overlap {
  double comm_total = 0;  // sum of the all-reduce times
  double comm_end = 0;    // when the last all-reduce ends, from the backward's start
  double exposed = 0;     // comm_end beyond the backward
};
// bucket_s[j]: the all-reduce time of bucket j, in the order the backward emits them.
Overlap OverlapBuckets(double backward_s, const std::vector<double>& bucket_s);

struct StepPrediction {
  int nodes = 0, ranks = 0;
  double samples_per_step = 0;
  Efficiency efficiency;  // the one used
  double compute_s = 0;   // all micro-batches, forward + backward
  Overlap overlap;
  double step_s = 0;
  double samples_per_s = 0;
  bool fits_memory = true;  // 16 bytes/param/(tp pp) (mixed-precision Adam) in one HBM
  std::string algorithm;    // the planner's choice for a full bucket
  // Tensor/pipeline parallelism (see the header comment); tp = pp = 1: all zero.
  int tp = 1, pp = 1, dp = 1;
  double tp_allreduce_s = 0;  // one activation all-reduce over the tp ranks
  std::string tp_algorithm;
  double tp_comm_s = 0;        // on the critical path, whole step
  double p2p_s = 0;            // one stage boundary crossing
  double bubble_s = 0;         // (pp - 1) slots
  double bubble_fraction = 0;  // (pp - 1) / (m + pp - 1)
  // price option ("on_demand", "spot", ...) -> dollars per step / per million samples.
  std::map<std::string, double> usd_per_step, usd_per_million_samples;
};

// The tp x pp x dp layout on a cluster (see the header comment) and the clusters its
// groups' collectives are predicted on: a tensor group is one host of tp accelerators;
// a DP group is the dp ranks holding one shard, with 1/tp of each NIC when its ranks span
// hosts (the tp groups of a host run their rings at the same time). Errors: tp not
// dividing a host, tp x pp not dividing the ranks, a stage (dp x tp ranks) neither
// filling whole hosts nor dividing one.
struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1;
  int stage_ranks = 1;  // dp * tp
  ClusterSpec tp_group;
  ClusterSpec dp_group;
  bool p2p_crosses_hosts = false;  // some stage boundary is between hosts
};
Result<ParallelLayout> LayoutFor(const ClusterSpec& cluster, int tp, int pp);

// The step on `cluster` (hosts = nodes) of instance `inst` (TFLOPS, HBM, prices).
Result<StepPrediction> PredictStep(const ClusterSpec& cluster, const Instance& inst,
                                   const ModelSpec& model, const TrainConfig& cfg);

}  // namespace weft::sim
