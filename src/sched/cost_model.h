// The alpha-beta cost model the planner weighs algorithms with when ranks span several
// hosts: each algorithm's steps costed from the topology, as its file builds them.
//
// A message of n bytes costs alpha + n / bandwidth. Messages inside a host run in
// parallel at the intra figures (shm); messages leaving (or arriving at) a host share its
// network links (one full-duplex NIC per host unless inter_links says more), so k of them
// at once over one link cost alpha + k·n / bandwidth, over L links alpha + ceil(k/L)·n /
// bandwidth. Local copies and reductions are not costed. A step of
// a schedule lasts as long as its slowest message; a pipelined chain (the ring and
// hierarchical broadcasts) costs its first segment's way down the chain plus one
// slowest hop per further segment. Pure functions, no state: safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace weft::sched {

// The link figures. The defaults are round figures for shm on one host and one 10 Gbit/s
// TCP link per host between hosts; WEFT_COST_MODEL overrides any of them:
// "inter_alpha_us=25,inter_gbps=10,inter_links=1,intra_alpha_us=2,intra_gbps=80".
struct CostModel {
  double intra_alpha_us = 2.0;
  double intra_gbps = 80.0;  // Gbit/s
  double inter_alpha_us = 25.0;
  double inter_gbps = 10.0;  // Gbit/s, per link
  double inter_links = 1;    // network links (NICs) per host, a whole number

  // Parses the WEFT_COST_MODEL syntax above (empty: the defaults). Unknown keys,
  // non-positive values and fractional links are InvalidArgument errors. `given`, when
  // not null, receives the keys the text sets (lower case), so that figures detected
  // later fill only the others.
  static Result<CostModel> Parse(const std::string& text,
                                 std::vector<std::string>* given = nullptr);
  // "intra 2 us 80 Gbit/s, inter 25 us 10 Gbit/s" (and " x 4 links" when more than one)
  std::string ToString() const;
  // The WEFT_COST_MODEL text that Parse() reads back as these figures.
  std::string ToSpec() const;
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

// The same for a reduce of `bytes` to `root` (binomial, ring; < 0 for others).
double EstimateReduceUs(const std::string& name, const Topology& topology, int root,
                        double bytes, const CostModel& costs);

// The same for a gather to `root` of `block` bytes from each rank, and a scatter from
// `root` of `block` bytes to each (binomial, linear; < 0 for others).
double EstimateGatherUs(const std::string& name, const Topology& topology, int root,
                        double block, const CostModel& costs);
double EstimateScatterUs(const std::string& name, const Topology& topology, int root,
                         double block, const CostModel& costs);

// The same for an alltoall of `block` bytes from every rank to every rank (pairwise,
// bruck; < 0 for others).
double EstimateAllToAllUs(const std::string& name, const Topology& topology, double block,
                          const CostModel& costs);

// The estimate above that fits `spec` (its collective, count and root, on its topology),
// for algorithm `name`. < 0 where the model has no branch for the algorithm, for the
// barrier, or without a topology of spec.size ranks.
double EstimateUs(const std::string& name, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs);

}  // namespace weft::sched
