// The planner: picks the algorithm for a call from the collective, the element count
// in bytes and the world size. WEFT_ALGO overrides it:
//   WEFT_ALGO=ring                       every collective that has "ring" uses it
//   WEFT_ALGO=allreduce:ring,broadcast:binomial   per collective
// An unknown name is an InvalidArgument error that lists the valid names.
//
// Without a topology, on one host, or with one rank per host, size thresholds measured
// on one machine choose. When the spec's topology spans more than one host with more
// than one rank on some host, every algorithm of the collective that supports the call
// is weighed with the alpha-beta cost model (cost_model.h) and the cheapest runs (every
// collective but the barrier, which has one algorithm). Explain() returns the numbers
// behind a choice.
#pragma once

#include <string>

#include "core/status.h"
#include "sched/cost_model.h"
#include "sched/registry.h"

namespace weft::sched {

struct PlanRequest {
  CollectiveSpec spec;
  size_t elem_size = 1;
};

struct PlanChoice {
  const Algorithm* algorithm = nullptr;
  // Why: "forced by WEFT_ALGO", "size thresholds", or the cost model's figures for every
  // candidate, cheapest first.
  std::string reason;
  // For a pipelined algorithm, the segments its estimate chose (CollectiveSpec::segments);
  // 0 otherwise.
  int segments = 0;

  // `spec` as the chosen algorithm builds it (with the segments).
  CollectiveSpec Planned(CollectiveSpec spec) const {
    spec.segments = segments;
    return spec;
  }
};

class Planner {
 public:
  // Parses `algo_override` (the WEFT_ALGO syntax above; empty: no override).
  static Result<Planner> Create(const std::string& algo_override, const CostModel& costs = {});
  // The algorithm to run. Never null for a valid spec.
  Result<const Algorithm*> Choose(const PlanRequest& request) const;
  // The same choice, with the reason behind it (for WEFT_DEBUG=INFO).
  Result<PlanChoice> Explain(const PlanRequest& request) const;
  const CostModel& costs() const { return costs_; }

 private:
  // Explain's choice of algorithm, before its segments.
  Result<PlanChoice> ExplainAlgorithm(const PlanRequest& request) const;

  // override_[coll] == nullptr: planner decides.
  std::string override_by_coll_[kNumCollectives];
  CostModel costs_;
};

}  // namespace weft::sched
