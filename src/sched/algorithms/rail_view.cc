#include "sched/algorithms/rail_view.h"

#include <utility>
#include <vector>

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

std::pair<std::vector<int>, std::vector<int>> RingAndRailPartners(
    const std::vector<std::vector<int>>& hosts) {
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  size_t p = 0;
  for (const auto& h : hosts) p += h.size();
  std::vector<int> ring(p, -1), rail(p, -1);
  for (int hp = 0; hp < num_hosts; ++hp) {
    for (int i = 0; i < local; ++i) {
      ring[hosts[hp][i]] = hosts[hp][(i + 1) % local];
      rail[hosts[hp][i]] = hosts[(hp + 1) % num_hosts][i];
    }
  }
  return {std::move(ring), std::move(rail)};
}

// A step's H messages of one block to the same peer cost as one of H blocks, plus, as in
// MessagesUs (and the simulator), one more intra latency for each message beyond a rank's
// first send and first receive: 2(H-1) of them.
double RailSetRingUs(const Topology& t, const std::vector<std::vector<int>>& hosts,
                     const std::vector<int>& ring, double block, const CostModel& c) {
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  if (local <= 1) return 0;
  return (local - 1) *
         (StepUs(t, ring, num_hosts * block, c) + 2 * (num_hosts - 1) * c.intra_alpha_us);
}

// H-1 rail steps of one block across hosts (every local rank's rail at once), and the
// L-1 steps of rail sets inside the host.
double RailRingsUs(const Topology& t, double block, const CostModel& c) {
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const auto [ring, rail] = RingAndRailPartners(hosts);
  double us = 0;
  if (num_hosts > 1) us += (num_hosts - 1) * StepUs(t, rail, block, c);
  return us + RailSetRingUs(t, hosts, ring, block, c);
}

}  // namespace weft::sched::algo
