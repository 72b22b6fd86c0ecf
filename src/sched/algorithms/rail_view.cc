#include "sched/algorithms/rail_view.h"

#include "sched/algorithms/algorithms.h"

namespace weft::sched::algo {

RailView RailView::Of(const CollectiveSpec& spec) {
  const Topology topology = HasUniformTopology(spec)
                                ? *spec.topology
                                : Topology::Contiguous(std::vector<int>(spec.size, 1));
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
