#include "sched/algorithms/rail_view.h"

#include "sched/algorithms/algorithms.h"

namespace weft::sched::algo {

Topology TopologyOrFlat(const CollectiveSpec& spec, bool require_uniform) {
  if (require_uniform ? HasUniformTopology(spec) : HasTopology(spec)) return *spec.topology;
  return Topology::Contiguous(std::vector<int>(spec.size, 1));
}

RailView RailView::Of(const CollectiveSpec& spec) {
  const Topology topology = TopologyOrFlat(spec, /*require_uniform=*/true);
  RailView rails;
  rails.hosts = topology.Hosts();
  rails.num_hosts = static_cast<int>(rails.hosts.size());
  rails.hp = topology.host_of[spec.rank];
  const std::vector<int>& mine = rails.hosts[rails.hp];
  rails.local = static_cast<int>(mine.size());
  while (mine[rails.li] != spec.rank) ++rails.li;
  return rails;
}

}  // namespace weft::sched::algo
