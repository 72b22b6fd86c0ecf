// The view of a topology that the rail-style hierarchical algorithms with equal hosts
// share (allgather, reduce-scatter): hosts in order of their lowest rank, this rank's
// host position and local index, and the rank at a (host position, local index) pair.
#pragma once

#include <vector>

#include "sched/algorithms/builder.h"
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

}  // namespace weft::sched::algo
