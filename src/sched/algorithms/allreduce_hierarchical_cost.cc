// The cost model's time for the hierarchical allreduce's schedules
// (allreduce_hierarchical.cc), pipelined or not, and the segment count the pipelined
// ones take: the one the model finds cheapest.
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/hierarchical_allreduce.h"

namespace weft::sched::algo {
namespace {

// The phases as BuildHierarchical lays them out, on the smallest host's m actives: the
// fold and unfold of the extras (one per active per round), then per segment of
// bytes/segments 2(m-1) ring steps of its chunk (1/m) inside each host and the rails'
// allreduce of that chunk, all m rails of a host leaving it in the same step.
// Segments overlap as the schedule lays them out (StaggeredUs); the stagger keeps two
// segments off the rails in one round.
double HierarchicalUs(const Topology& t, double bytes, const CostModel& c, RailExchange rail,
                      int segments) {
  const auto hosts = t.Hosts();
  const int p = static_cast<int>(t.host_of.size());
  const int num_hosts = static_cast<int>(hosts.size());
  int m = p, most = 0;
  for (const auto& h : hosts) {
    m = std::min(m, static_cast<int>(h.size()));
    most = std::max(most, static_cast<int>(h.size()));
  }
  double us = 0;
  // 0 and 4. Fold and unfold of extras, one extra per active per round.
  const int fold_rounds = (most - m + m - 1) / m;
  for (int k = 0; k < fold_rounds; ++k) {
    std::vector<int> fold(p, -1);
    for (const auto& h : hosts) {
      for (int j = m * (k + 1); j < std::min<int>(m * (k + 2), h.size()); ++j) {
        fold[h[j]] = h[j % m];
      }
    }
    us += 2 * StepUs(t, fold, bytes, c);
  }
  const double seg = bytes / segments;
  // 1 and 3. Intra-host reduce-scatter and allgather: ring steps of seg/m (alone on its
  // host, a rank's one round is a local copy).
  std::vector<int> ring(p, -1), rail_next(p, -1);
  for (int hp = 0; hp < num_hosts; ++hp) {
    for (int i = 0; i < m; ++i) {
      ring[hosts[hp][i]] = hosts[hp][(i + 1) % m];
      rail_next[hosts[hp][i]] = hosts[(hp + 1) % num_hosts][i];
    }
  }
  const double intra_step = m > 1 ? StepUs(t, ring, seg / m, c) : 0;
  // 2. Inter-host allreduce per rail: a ring's 2(H-1) steps of seg/(m H), or
  // Rabenseifner's over host positions, every host's m rails side by side.
  std::vector<double> rail_steps;
  if (num_hosts > 1 && rail == RailExchange::kHalvingDoubling) {
    rail_steps = ButterflyStepsUs(
        t, num_hosts, m, [&](int hp, int i) { return hosts[hp][i]; }, seg / m, c, true);
  } else if (num_hosts > 1) {
    rail_steps.assign(2 * (num_hosts - 1), StepUs(t, rail_next, seg / m / num_hosts, c));
  }
  // One segment's rounds: p1 inside the host, the rail's, m-1 inside the host.
  const int p1 = std::max(m - 1, 1);
  std::vector<SegmentRound> rounds(p1, {intra_step, false});
  for (double step : rail_steps) rounds.push_back({step, true});
  rounds.insert(rounds.end(), m - 1, {intra_step, false});
  const int stagger = std::max({p1, static_cast<int>(rail_steps.size()), 1});
  us += StaggeredUs(rounds, segments, stagger);
  return us;
}

// The cheapest segment count for the call, each segment's chunk on every rail at least one
// element per host (so that no rail step is empty).
int SegmentsFor(const CostQuery& q, const CostModel& c, RailExchange rail) {
  const Topology& t = q.topology;
  int m = q.size();
  for (const auto& h : t.Hosts()) m = std::min(m, static_cast<int>(h.size()));
  return CheapestSegments(q.count / (static_cast<size_t>(m) * t.NumHosts()), [&](int segments) {
    return HierarchicalUs(t, q.bytes(), c, rail, segments);
  });
}

}  // namespace

double EstimateAllReduceHierarchicalUs(const CostQuery& q, const CostModel& c) {
  return HierarchicalUs(q.topology, q.bytes(), c, RailExchange::kRing, 1);
}

double EstimateAllReduceHierarchicalRabenseifnerUs(const CostQuery& q, const CostModel& c) {
  return HierarchicalUs(q.topology, q.bytes(), c, RailExchange::kHalvingDoubling, 1);
}

int SegmentsAllReduceHierarchicalPipelined(const CostQuery& q, const CostModel& c) {
  return SegmentsFor(q, c, RailExchange::kRing);
}

int SegmentsAllReduceHierarchicalRabenseifnerPipelined(const CostQuery& q, const CostModel& c) {
  return SegmentsFor(q, c, RailExchange::kHalvingDoubling);
}

double EstimateAllReduceHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c) {
  return HierarchicalUs(q.topology, q.bytes(), c, RailExchange::kRing,
                        SegmentsAllReduceHierarchicalPipelined(q, c));
}

double EstimateAllReduceHierarchicalRabenseifnerPipelinedUs(const CostQuery& q,
                                                            const CostModel& c) {
  return HierarchicalUs(q.topology, q.bytes(), c, RailExchange::kHalvingDoubling,
                        SegmentsAllReduceHierarchicalRabenseifnerPipelined(q, c));
}

// Rabenseifner along the rails (and the hierarchical allgather's recursive-doubling rails)
// must be this much cheaper in the model than every other algorithm of its collective
// before it is chosen. Its rails exchange with hosts at xor distances where the ring's
// talk to neighbours, and the model sees no switch, so it credits the butterfly only with
// fewer latencies (2 lg H against 2(H-1)). On 2 hosts the two are one schedule; on 4 the
// model puts the butterfly 5% ahead at 32 KiB over 0.5 Gbit/s, inside the spread of the
// namespace measurements behind the ring's choice. The same 10% as the hierarchical
// broadcast's margin; from ~16 hosts the latencies it saves are worth far more.
Margin RailButterflyMargin(const CostModel&) {
  return {0.10, "its rails' distant partners are unmeasured"};
}

}  // namespace weft::sched::algo
