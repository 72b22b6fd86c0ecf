// Planner -> schedules -> engine, choosing the symmetry shortcut when it is exact.
#include "sim/collective.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "sched/planner.h"
#include "sched/registry.h"
#include "sim/engine.h"

namespace weft::sim {
namespace {

using sched::Collective;

struct Plan {
  Symmetry symmetry;
  std::vector<sched::Schedule> schedules;  // one per representative
  std::string why_full;
};

std::vector<sched::Schedule> BuildRanks(const sched::Algorithm& algo, sched::CollectiveSpec spec,
                                        int n) {
  std::vector<sched::Schedule> out;
  out.reserve(n);
  for (int r = 0; r < n; ++r) {
    spec.rank = r;
    out.push_back(algo.build(spec));
  }
  return out;
}

// Tries translation, then xor, at the cluster's period; falls back to every rank.
Plan PlanSymmetry(const ClusterSpec& cluster, const sched::Algorithm& algo,
                  const sched::CollectiveSpec& spec, SymmetryMode mode) {
  const int p = cluster.ranks();
  const int period = TopologyPeriod(cluster);
  std::string why;
  if (mode != SymmetryMode::kOff && period < p) {
    const EquivarianceCheck check = mode == SymmetryMode::kExhaustive
                                        ? EquivarianceCheck::kExhaustive
                                        : EquivarianceCheck::kSampled;
    std::vector<sched::Schedule> reps;
    for (SymmetryKind kind : {SymmetryKind::kTranslation, SymmetryKind::kXor}) {
      if (!ClusterInvariant(cluster, kind, period)) continue;
      const Symmetry sym = Symmetry::Of(kind, p, period);
      if (reps.empty()) reps = BuildRanks(algo, spec, period);
      std::string why_not;
      if (Equivariant(sym, algo.build, spec, reps, check, &why_not)) {
        return {sym, std::move(reps), ""};
      }
      why += (why.empty() ? "" : "; ") + why_not;
    }
  } else {
    why = mode == SymmetryMode::kOff ? "symmetry disabled" : "one rank per symmetry period";
  }
  return {Symmetry::None(p), BuildRanks(algo, spec, p), why.empty() ? "no symmetry" : why};
}

}  // namespace

size_t CountForBytes(Collective coll, size_t bytes, size_t elem_size, int ranks) {
  const size_t elems = bytes / elem_size;
  switch (coll) {
    case Collective::kAllGather:
    case Collective::kGather:
    case Collective::kReduceScatter:
    case Collective::kScatter:
    case Collective::kAllToAll:
      return elems / static_cast<size_t>(ranks);
    case Collective::kBarrier:
      return 0;
    default:
      return elems;
  }
}

double BusBwFactor(Collective coll, int n) {
  switch (coll) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

sched::CostModel PlannerCostsFor(const ClusterSpec& c) {
  sched::CostModel m;
  m.intra_alpha_us = c.intra_alpha_s * 1e6;
  m.intra_gbps = c.intra_bytes_per_s * 8 / 1e9;
  m.inter_alpha_us = c.inter_alpha_s * 1e6;
  m.inter_gbps = c.nic_bytes_per_s * 8 / 1e9;
  m.inter_links = c.nics_per_host;
  return m;
}

Result<Prediction> PredictCollective(const ClusterSpec& cluster, const CollectiveQuery& query,
                                     SymmetryMode mode) {
  WEFT_RETURN_IF_ERROR(Validate(cluster));
  const int p = cluster.ranks();
  const size_t elem = DataTypeSize(query.dtype);
  sched::CollectiveSpec spec;
  spec.coll = query.coll;
  spec.size = p;
  spec.root = query.root;
  spec.count = CountForBytes(query.coll, query.bytes, elem, p);
  // The cluster's placement, as a communicator would see it: accels_per_host ranks per
  // host, numbered host by host (topology-aware algorithms and planner choices read it).
  spec.topology = std::make_shared<const sched::Topology>(
      sched::Topology::Contiguous(std::vector<int>(cluster.hosts, cluster.accels_per_host)));

  const sched::CostModel costs = query.planner_costs.value_or(PlannerCostsFor(cluster));
  WEFT_ASSIGN_OR_RETURN(sched::Planner planner, sched::Planner::Create(query.algo, costs));
  WEFT_ASSIGN_OR_RETURN(const sched::PlanChoice choice, planner.Explain({spec, elem}));
  const sched::Algorithm* algo = choice.algorithm;
  spec = choice.Planned(spec);

  Plan plan = PlanSymmetry(cluster, *algo, spec, mode);
  EngineInput input{&cluster, &plan.symmetry, &plan.schedules, elem};
  WEFT_ASSIGN_OR_RETURN(EngineResult run, RunEngine(input));

  Prediction out;
  out.algorithm = algo->name;
  out.segments = choice.segments;
  out.reason = choice.reason;
  out.planner_costs = costs.ToSpec();
  out.count = spec.count;
  out.seconds = run.seconds;
  // nccl-tests' S: the size column rounded to what the ranks really move.
  const double s_bytes = static_cast<double>(query.coll == Collective::kAllReduce ||
                                                     query.coll == Collective::kBroadcast ||
                                                     query.coll == Collective::kReduce
                                                 ? spec.count * elem
                                                 : spec.count * elem * static_cast<size_t>(p));
  out.algbw_gbps = run.seconds > 0 ? s_bytes / run.seconds / 1e9 : 0;
  out.busbw_gbps = out.algbw_gbps * BusBwFactor(query.coll, p);
  out.symmetry = plan.symmetry.ToString();
  out.why_full = plan.why_full;
  out.simulated_ranks = plan.symmetry.reps();
  out.messages = run.messages;
  return out;
}

}  // namespace weft::sim
