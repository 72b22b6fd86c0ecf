// WEFT_ALGO parsing and the default algorithm choice: the size thresholds on one host,
// the cost model (cost_model.h) across hosts.
#include "sched/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/comma_list.h"

namespace weft::sched {
namespace {

// Size thresholds in bytes. First guesses from the textbook cost models
// (reference/collective-costs.md): below them the lg p latency terms of tree, doubling
// and Bruck algorithms win, above them the bandwidth terms of ring and pairwise ones.
// To be tuned by measurement (weft-bench) per transport.
constexpr size_t kAllReduceSmallBytes = 64 << 10;  // compared with count·elem
// Between small and this, Rabenseifner's lg p latency beats the ring's p-1 steps on
// power-of-two worlds (elsewhere its fold sends the whole vector once more); above
// it the ring's neighbour-only traffic and deep pipelining win.
constexpr size_t kAllReduceMediumBytes = 4 << 20;
constexpr size_t kReduceSmallBytes = 64 << 10;         // count·elem
constexpr size_t kBroadcastSmallBytes = 64 << 10;      // count·elem
constexpr size_t kAllGatherSmallBytes = 64 << 10;      // total gathered: size·count·elem
constexpr size_t kReduceScatterSmallBytes = 64 << 10;  // total input: size·count·elem
constexpr size_t kAllToAllSmallBytes = 64 << 10;       // total sent: size·count·elem
constexpr size_t kGatherScatterSmallBytes = 64 << 10;  // total at the root: size·count·elem

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::vector<std::string> NamesFor(Collective coll) {
  std::vector<std::string> names;
  for (const Algorithm& a : AllAlgorithms()) {
    if (a.coll == coll) names.push_back(a.name);
  }
  return names;
}

std::vector<std::string> AllNames() {
  std::set<std::string> names;
  for (const Algorithm& a : AllAlgorithms()) names.insert(a.name);
  return {names.begin(), names.end()};
}

std::vector<std::string> CollectiveNames() {
  std::vector<std::string> names;
  for (int i = 0; i < kNumCollectives; ++i) {
    names.push_back(CollectiveName(static_cast<Collective>(i)));
  }
  return names;
}

int FindCollective(std::string_view name) {
  for (int i = 0; i < kNumCollectives; ++i) {
    if (name == CollectiveName(static_cast<Collective>(i))) return i;
  }
  return -1;
}

Status ValidateSpec(const CollectiveSpec& spec) {
  const int c = static_cast<int>(spec.coll);
  if (c < 0 || c >= kNumCollectives)
    return InvalidArgument(fmt::format("unknown collective {}", c));
  if (spec.size < 1 || spec.rank < 0 || spec.rank >= spec.size) {
    return InvalidArgument(fmt::format("{}: rank {} is not in a world of {} ranks",
                                       CollectiveName(spec.coll), spec.rank, spec.size));
  }
  if (spec.root < 0 || spec.root >= spec.size) {
    return InvalidArgument(fmt::format("{}: root {} is not in a world of {} ranks",
                                       CollectiveName(spec.coll), spec.root, spec.size));
  }
  return Status::Ok();
}

bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The default algorithm name for a call; see the thresholds above.
const char* DefaultName(const CollectiveSpec& spec, size_t elem_size) {
  const size_t bytes = spec.count * elem_size;
  const size_t total = bytes * static_cast<size_t>(spec.size);
  switch (spec.coll) {
    case Collective::kAllReduce:
      if (bytes < kAllReduceSmallBytes) return "recursive_doubling";
      if (bytes < kAllReduceMediumBytes && IsPowerOfTwo(spec.size)) return "rabenseifner";
      return "ring";
    case Collective::kReduce: return bytes < kReduceSmallBytes ? "binomial" : "ring";
    case Collective::kBroadcast: return bytes < kBroadcastSmallBytes ? "binomial" : "ring";
    case Collective::kAllGather:
      if (total >= kAllGatherSmallBytes) return "ring";
      return IsPowerOfTwo(spec.size) ? "recursive_doubling" : "bruck";
    case Collective::kReduceScatter:
      // Small: lg p rounds where the world allows, else pairwise (same terms as the ring,
      // but no forwarding chain, so a slow rank delays only its own peers). Large: the
      // ring keeps every link busy with neighbour-only traffic.
      if (total >= kReduceScatterSmallBytes) return "ring";
      return IsPowerOfTwo(spec.size) ? "recursive_halving" : "pairwise";
    case Collective::kAllToAll: return total < kAllToAllSmallBytes ? "bruck" : "pairwise";
    case Collective::kGather:
    case Collective::kScatter: return total < kGatherScatterSmallBytes ? "binomial" : "linear";
    case Collective::kBarrier: return "dissemination";
  }
  return "";
}

// Where the ranks are, as far as the planner cares.
//   kMultiHostShared: more than one host, and more than one rank on some host. The cost
//     model is worth asking: it sees hierarchical algorithms use the hosts' shm.
//   kMultiHostAlone: more than one host, one rank on each. Only flat algorithms remain,
//     whose order the model cannot tell apart better than the measured thresholds near
//     the scale they were measured at (it sees no switch, so a butterfly's distant
//     partners cost it no more than a ring's neighbours); see kAloneMeasuredHosts.
//   kOther: one host, or no topology.
enum class Placement { kOther, kMultiHostShared, kMultiHostAlone };

Placement PlacementOf(const CollectiveSpec& spec) {
  if (spec.topology == nullptr || spec.topology->host_of.size() != static_cast<size_t>(spec.size))
    return Placement::kOther;
  const size_t hosts = spec.topology->Hosts().size();
  if (hosts < 2) return Placement::kOther;
  return hosts == static_cast<size_t>(spec.size) ? Placement::kMultiHostAlone
                                                 : Placement::kMultiHostShared;
}

// With one rank per host the size thresholds were measured on up to this many hosts
// (namespaces on one machine, docs/SIMULATOR.md), and there they choose: near that scale
// the model cannot rank flat algorithms better than those measurements (it sees no
// switch; see Placement). Beyond it nothing was measured, and the model sees what
// the thresholds cannot: latency terms that grow with p. The ring's 2(p-1) network
// latencies against Rabenseifner's 2 lg p make a 25 MiB bucket over 16,384 GH200 hosts
// 329 ms against 1.4 ms.
constexpr int kAloneMeasuredHosts = 8;
// Beyond kAloneMeasuredHosts the thresholds' pick still stands unless the model puts it at
// more than this many times the cheapest, so a near tie keeps the measured choice.
constexpr double kAloneOverrideFactor = 1.5;

std::string FormatBytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0)
    return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// The margin an algorithm must beat every other by in the model before it is chosen, and
// why (for the planner's explanation); each algorithm that needs one says why in its file.
Margin MarginOf(const Algorithm& a, const CostModel& costs) {
  return a.margin != nullptr ? a.margin(costs) : Margin{};
}

struct Candidate {
  const Algorithm* algorithm;
  double us;       // the model's time
  double weighed;  // us / (1 - margin): what the candidates are ranked by
};

// Every algorithm of the call's collective that supports it and that the model costs,
// cheapest (weighed) first; the size thresholds' choice goes in first, so a tie keeps it
// (those thresholds were measured). Empty where the model costs none of them.
std::vector<Candidate> WeighAll(const PlanRequest& request, const Algorithm* by_size,
                                const CostModel& costs) {
  const CollectiveSpec& spec = request.spec;
  std::vector<Candidate> candidates;
  auto consider = [&](const Algorithm& a) {
    if (a.coll != spec.coll || !a.supports(spec)) return;
    for (const Candidate& c : candidates) {
      if (c.algorithm == &a) return;
    }
    const double us = EstimateUs(a, spec, request.elem_size, costs);
    if (us >= 0) candidates.push_back({&a, us, us / (1.0 - MarginOf(a, costs).fraction)});
  };
  if (by_size != nullptr) consider(*by_size);
  for (const Algorithm& a : AllAlgorithms()) consider(a);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.weighed < b.weighed; });
  return candidates;
}

// "cost model for 32 KiB on 4 hosts x 2 ranks (intra ..., inter ...), cheapest first:
// hierarchical 943.7 us, ring 1267.5 us, ..." with every candidate, ranked with its margin.
std::string ExplainWeighing(const PlanRequest& request, const std::vector<Candidate>& candidates,
                            const CostModel& costs) {
  const CollectiveSpec& spec = request.spec;
  const char* per = "";  // what count means (see CollectiveSpec)
  if (spec.coll == Collective::kAllGather || spec.coll == Collective::kReduceScatter ||
      spec.coll == Collective::kGather || spec.coll == Collective::kScatter) {
    per = " per rank";
  }
  if (spec.coll == Collective::kAllToAll) per = " per peer";
  std::string out = fmt::format("cost model for {}{} on {} ({}), cheapest first:",
                                FormatBytes(spec.count * request.elem_size), per,
                                spec.topology->Describe(), costs.ToString());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    out += fmt::format("{} {} {:.1f} us", i == 0 ? "" : ",", c.algorithm->name, c.us);
    const Margin margin = MarginOf(*c.algorithm, costs);
    if (margin.fraction > 0) {
      out += fmt::format(" (ranked as {:.1f} us: it needs {:.0f}% under the others, {})", c.weighed,
                         margin.fraction * 100, margin.why);
    }
  }
  return out;
}

}  // namespace

Result<Planner> Planner::Create(const std::string& algo_override, const CostModel& costs) {
  Planner planner;
  planner.costs_ = costs;
  if (TrimLower(algo_override).empty()) return planner;
  for (const std::string& entry : SplitCommas(algo_override)) {
    if (entry.empty()) continue;  // tolerate "ring," and ",,"
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) {
      // A bare name applies to every collective that has an algorithm of that name.
      bool any = false;
      for (int i = 0; i < kNumCollectives; ++i) {
        if (FindAlgorithm(static_cast<Collective>(i), entry) != nullptr) {
          planner.override_by_coll_[i] = entry;
          any = true;
        }
      }
      if (!any) {
        return InvalidArgument(
            fmt::format("WEFT_ALGO: no collective has an algorithm named '{}'; valid names: {} "
                        "(or <collective>:<name>, e.g. allreduce:ring)",
                        entry, Join(AllNames())));
      }
      continue;
    }
    const std::string coll_name = TrimLower(std::string_view(entry).substr(0, colon));
    const std::string algo_name = TrimLower(std::string_view(entry).substr(colon + 1));
    const int coll = FindCollective(coll_name);
    if (coll < 0) {
      return InvalidArgument(
          fmt::format("WEFT_ALGO: unknown collective '{}' in '{}'; valid "
                      "collectives: {}",
                      coll_name, entry, Join(CollectiveNames())));
    }
    if (FindAlgorithm(static_cast<Collective>(coll), algo_name) == nullptr) {
      return InvalidArgument(fmt::format(
          "WEFT_ALGO: {} has no algorithm named '{}'; valid names for {}: {}", coll_name, algo_name,
          coll_name, Join(NamesFor(static_cast<Collective>(coll)))));
    }
    planner.override_by_coll_[coll] = algo_name;
  }
  return planner;
}

// An override that does not support the spec (recursive_doubling allgather on 6 ranks)
// falls back to the default choice rather than failing the call: WEFT_ALGO is a
// preference, and one value must work for every communicator of a job.
Result<const Algorithm*> Planner::Choose(const PlanRequest& request) const {
  WEFT_ASSIGN_OR_RETURN(PlanChoice choice, Explain(request));
  return choice.algorithm;
}

Result<PlanChoice> Planner::Explain(const PlanRequest& request) const {
  WEFT_ASSIGN_OR_RETURN(PlanChoice choice, ExplainAlgorithm(request));
  const Algorithm& a = *choice.algorithm;
  const CollectiveSpec& spec = request.spec;
  if (a.segments != nullptr && spec.topology != nullptr && spec.size > 1) {
    const CostQuery query{*spec.topology, spec.count, request.elem_size, spec.root};
    choice.segments = a.segments(query, costs_);
    choice.reason += fmt::format("; {} in {} segment{}", a.name, choice.segments,
                                 choice.segments == 1 ? "" : "s");
  }
  return choice;
}

Result<PlanChoice> Planner::ExplainAlgorithm(const PlanRequest& request) const {
  const CollectiveSpec& spec = request.spec;
  WEFT_RETURN_IF_ERROR(ValidateSpec(spec));
  const size_t bytes = spec.count * request.elem_size;
  const std::string& forced = override_by_coll_[static_cast<int>(spec.coll)];
  std::string fallback;
  if (!forced.empty()) {
    const Algorithm* algorithm = FindAlgorithm(spec.coll, forced);
    if (algorithm != nullptr && algorithm->supports(spec)) {
      return PlanChoice{algorithm, fmt::format("forced by WEFT_ALGO ({} bytes)", bytes)};
    }
    fallback = fmt::format("WEFT_ALGO's {} does not support this call; ", forced);
  }
  // Registered buffers on one host: the single-pass algorithm touches each byte least
  // (docs/TRANSPORTS.md, "Registered buffers").
  if (spec.registered) {
    const Algorithm* single = FindAlgorithm(spec.coll, "single_pass");
    if (single != nullptr && single->supports(spec)) {
      return PlanChoice{
          single, fmt::format("{}buffers registered on every rank ({} bytes)", fallback, bytes)};
    }
  }
  const Algorithm* by_size = FindAlgorithm(spec.coll, DefaultName(spec, request.elem_size));
  if (by_size != nullptr && !by_size->supports(spec)) by_size = nullptr;
  // Across hosts: every algorithm the model can cost, the cheapest wins.
  const Placement placement = PlacementOf(spec);
  if (placement == Placement::kMultiHostShared) {
    const std::vector<Candidate> candidates = WeighAll(request, by_size, costs_);
    if (!candidates.empty()) {
      return PlanChoice{candidates.front().algorithm,
                        fallback + ExplainWeighing(request, candidates, costs_)};
    }
  }
  if (by_size != nullptr && placement == Placement::kMultiHostAlone &&
      spec.size > kAloneMeasuredHosts) {
    const std::vector<Candidate> candidates = WeighAll(request, by_size, costs_);
    const auto mine = std::find_if(candidates.begin(), candidates.end(),
                                   [&](const Candidate& c) { return c.algorithm == by_size; });
    if (mine != candidates.end() &&
        mine->weighed > kAloneOverrideFactor * candidates.front().weighed) {
      return PlanChoice{
          candidates.front().algorithm,
          fmt::format("{}size thresholds pick {}, but the model puts it at {:.1f}x the cheapest "
                      "(more than {:g}x, beyond the {} hosts the thresholds were measured on); {}",
                      fallback, by_size->name, mine->weighed / candidates.front().weighed,
                      kAloneOverrideFactor, kAloneMeasuredHosts,
                      ExplainWeighing(request, candidates, costs_))};
    }
  }
  if (by_size != nullptr) {
    return PlanChoice{by_size,
                      fmt::format("{}size thresholds for {}{}", fallback, FormatBytes(bytes),
                                  spec.topology ? " on " + spec.topology->Describe() : "")};
  }
  // Safety net: the first registered algorithm that supports the spec.
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll == spec.coll && algorithm.supports(spec)) {
      return PlanChoice{&algorithm, fallback + "first algorithm that supports the call"};
    }
  }
  return Internal(
      fmt::format("no algorithm supports {} on {} ranks", CollectiveName(spec.coll), spec.size));
}

}  // namespace weft::sched
