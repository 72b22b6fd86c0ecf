// The view of a topology that the rail-style hierarchical algorithms with equal hosts
// share (allgather, reduce-scatter): hosts in order of their lowest rank, this rank's
// host position and local index, and the rank at a (host position, local index) pair.
#pragma once

#include <utility>
#include <vector>

#include "sched/algorithms/builder.h"
#include "sched/cost_model.h"
#include "sched/schedule.h"

namespace weft::sched::algo {

struct RailView {
  // Hosts of unequal sizes, or no topology, count as one rank per host: the rail
  // algorithms then degenerate to flat rings (still correct).
  static RailView Of(const CollectiveSpec& spec);

  // The rank with local index i on the host at rail position h, both taken modulo.
  int At(int h, int i) const { return hosts[RingPeer(h, num_hosts, 0)][RingPeer(i, local, 0)]; }

  std::vector<std::vector<int>> hosts;
  int num_hosts = 0;
  int hp = 0;     // this rank's host position
  int local = 0;  // ranks per host
  int li = 0;     // this rank's local index on its host
};

// The cost model's side of the same rails (sched/cost_model.h), for the estimates of
// both hierarchical allgathers and the hierarchical reduce-scatter, equal hosts only.

// Each rank's partner in the ring inside its host, and along its rail to the next host.
std::pair<std::vector<int>, std::vector<int>> RingAndRailPartners(
    const std::vector<std::vector<int>>& hosts);

// The L-1 steps inside the host of both rail allgathers (and the reduce-scatter's
// mirror): each rank sends H blocks to the next local rank and receives H.
double RailSetRingUs(const Topology& t, const std::vector<std::vector<int>>& hosts,
                     const std::vector<int>& ring, double block, const CostModel& c);

// The ring rails and the ring of rail sets: the hierarchical allgather and reduce-scatter
// cost the same, in mirror order.
double RailRingsUs(const Topology& t, double block, const CostModel& c);

// The same in `segments` overlapping segments (the pipelined allgather and reduce-scatter:
// `rails_first` for the allgather, whose rails come before the host's ring).
double RailRingsPipelinedUs(const Topology& t, double block, const CostModel& c, int segments,
                            bool rails_first);
// The segment count among 1..32 that RailRingsPipelinedUs finds cheapest (the fewer on a
// tie), each segment at least one element of a block.
int CheapestRailRingsSegments(const CostQuery& q, const CostModel& c, bool rails_first);

}  // namespace weft::sched::algo
