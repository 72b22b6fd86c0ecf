// The planner: picks the algorithm for a call from the collective, the element count
// in bytes and the world size. WEFT_ALGO overrides it:
//   WEFT_ALGO=ring                       every collective that has "ring" uses it
//   WEFT_ALGO=allreduce:ring,broadcast:binomial   per collective
// An unknown name is an InvalidArgument error that lists the valid names.
//
// Topology: when the spec carries a topology (which host each rank is on) that spans
// more than one host with more than one rank on some host, the allreduce and allgather
// choices are made by an alpha-beta cost model: the flat algorithm the size thresholds
// pick is weighed against `hierarchical` (where it supports the topology), with separate
// latency and bandwidth figures inside a host (shm) and between hosts. Explain() returns
// the numbers behind a choice.
#pragma once

#include <string>

#include "core/status.h"
#include "sched/registry.h"

namespace weft::sched {

struct PlanRequest {
  CollectiveSpec spec;
  size_t elem_size = 1;
};

// Alpha-beta link figures: a message of n bytes costs alpha + n / bandwidth. Between
// hosts, the ranks of one host share its network link (one NIC per host), so k messages
// leaving a host at once cost alpha + k·n / bandwidth. The defaults are round figures for
// shm on one host and a 10 Gbit/s TCP network between hosts; WEFT_COST_MODEL overrides
// any of them: "inter_alpha_us=25,inter_gbps=10,intra_alpha_us=2,intra_gbps=80".
struct CostModel {
  double intra_alpha_us = 2.0;
  double intra_gbps = 80.0;  // Gbit/s
  double inter_alpha_us = 25.0;
  double inter_gbps = 10.0;  // Gbit/s, per host

  // Parses the WEFT_COST_MODEL syntax above (empty: the defaults). Unknown keys and
  // non-positive values are InvalidArgument errors.
  static Result<CostModel> Parse(const std::string& text);
  std::string ToString() const;  // "intra 2 us 80 Gbit/s, inter 25 us 10 Gbit/s"
};

// Estimated time (microseconds) of allreduce algorithm `name` on `topology` for `bytes`
// (ring, recursive_doubling, rabenseifner, binomial, hierarchical; < 0 for others).
double EstimateAllReduceUs(const std::string& name, const Topology& topology, double bytes,
                           const CostModel& costs);

// The same for allgather, `block` bytes contributed by each rank (ring,
// recursive_doubling, bruck, hierarchical; < 0 for others).
double EstimateAllGatherUs(const std::string& name, const Topology& topology, double block,
                           const CostModel& costs);

// The same for reducescatter, `block` bytes received by each rank (ring, pairwise,
// recursive_halving, hierarchical; < 0 for others).
double EstimateReduceScatterUs(const std::string& name, const Topology& topology, double block,
                               const CostModel& costs);

// The same for a broadcast of `count` elements of `elem_size` bytes from `root` (binomial,
// ring, scatter_allgather, hierarchical; < 0 for others). The count, not only the bytes:
// the ring and hierarchical schedules cut segments by elements.
double EstimateBroadcastUs(const std::string& name, const Topology& topology, int root,
                           size_t count, size_t elem_size, const CostModel& costs);

struct PlanChoice {
  const Algorithm* algorithm = nullptr;
  // Why: "WEFT_ALGO", "size thresholds" or the cost-model figures of the candidates.
  std::string reason;
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
  // override_[coll] == nullptr: planner decides.
  std::string override_by_coll_[kNumCollectives];
  CostModel costs_;
};

}  // namespace weft::sched
