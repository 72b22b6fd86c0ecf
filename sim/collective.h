// Predicting one collective call: the planner picks the algorithm exactly as the library
// would (same thresholds, same WEFT_ALGO syntax), the algorithm emits its per-rank
// schedules, unmodified, and the engine runs them against the cluster model.
//
// Sizes follow nccl-tests: `bytes` is the "size" column (allreduce/broadcast/reduce: the
// buffer; allgather: the gathered output; reducescatter: the input; alltoall: what one
// rank sends in total), from which the per-rank element count is derived.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/status.h"
#include "core/types.h"
#include "sched/cost_model.h"
#include "sched/schedule.h"
#include "sim/cluster.h"
#include "sim/symmetry.h"

namespace weft::sim {

struct CollectiveQuery {
  sched::Collective coll = sched::Collective::kAllReduce;
  size_t bytes = 0;
  DataType dtype = DataType::kFloat32;
  int root = 0;
  std::string algo;  // WEFT_ALGO syntax ("ring", "allreduce:ring"); empty: planner default
  // The figures the planner weighs algorithms with (WEFT_COST_MODEL on a real run).
  // Empty: the cluster's own (PlannerCostsFor), as a run told its fabric would use.
  std::optional<sched::CostModel> planner_costs;
};

// The cluster's figures in the planner's terms: intra latency and bandwidth per rank,
// inter latency, bandwidth per NIC and NICs per host.
sched::CostModel PlannerCostsFor(const ClusterSpec& cluster);

enum class SymmetryMode {
  kAuto,        // use a symmetry when the cluster and a sampled check allow it
  kOff,         // always simulate every rank
  kExhaustive,  // use a symmetry only after checking every rank's schedule
};

struct Prediction {
  std::string algorithm;  // the registry name the planner chose
  int segments = 0;       // a pipelined algorithm's segments (CollectiveSpec); else 0
  std::string reason;     // the planner's reason (its cost model's figures per candidate)
  std::string planner_costs;  // the figures it chose with, WEFT_COST_MODEL syntax
  size_t count = 0;       // elements per rank, as in CollectiveSpec::count
  double seconds = 0;
  double algbw_gbps = 0;  // GB/s (1e9), nccl-tests convention
  double busbw_gbps = 0;
  std::string symmetry;  // "none", "translation/8", ...
  std::string why_full;  // when symmetry is "none": why no shortcut applied
  int simulated_ranks = 0;
  uint64_t messages = 0;  // messages the engine ran
};

// Elements per rank for an nccl-tests size (see above).
size_t CountForBytes(sched::Collective coll, size_t bytes, size_t elem_size, int ranks);
// nccl-tests' busbw / algbw factor for `coll` on `ranks` ranks.
double BusBwFactor(sched::Collective coll, int ranks);

Result<Prediction> PredictCollective(const ClusterSpec& cluster, const CollectiveQuery& query,
                                     SymmetryMode mode = SymmetryMode::kAuto);

}  // namespace weft::sim
