#include "sched/algorithms/rail_view.h"

#include <algorithm>
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

// One segment's rounds: H-1 rail steps of a block's segment (one round when alone on
// the host's rail: the copy), and L-1 steps of H of them inside the host.
double RailRingsPipelinedUs(const Topology& t, double block, const CostModel& c, int segments,
                            bool rails_first) {
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  const auto [ring, rail] = RingAndRailPartners(hosts);
  const double seg = block / segments;
  std::vector<SegmentRound> rail_rounds, host_rounds;
  for (int s = 0; s < std::max(num_hosts - 1, 1); ++s) {
    rail_rounds.push_back({num_hosts > 1 ? StepUs(t, rail, seg, c) : 0.0, true});
  }
  if (local > 1) {
    const double step =
        StepUs(t, ring, num_hosts * seg, c) + 2 * (num_hosts - 1) * c.intra_alpha_us;
    host_rounds.assign(local - 1, {step, false});
  }
  std::vector<SegmentRound> rounds = rails_first ? rail_rounds : host_rounds;
  const auto& then = rails_first ? host_rounds : rail_rounds;
  rounds.insert(rounds.end(), then.begin(), then.end());
  return StaggeredUs(rounds, segments, std::max({num_hosts - 1, local - 1, 1}));
}

int CheapestRailRingsSegments(const CostQuery& q, const CostModel& c, bool rails_first) {
  return CheapestSegments(q.count, [&](int segments) {
    return RailRingsPipelinedUs(q.topology, q.bytes(), c, segments, rails_first);
  });
}

bool SupportsRailRingsPipelined(const CollectiveSpec& spec) {
  if (!HasUniformTopology(spec)) return false;
  const auto hosts = spec.topology->Hosts();
  return hosts.size() > 1 && hosts[0].size() > 1;
}

}  // namespace weft::sched::algo
