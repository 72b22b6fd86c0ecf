// WEFT_ALGO parsing and the default algorithm choice.
#include "sched/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <vector>

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

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  std::string out(s.substr(b, e - b));
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    parts.push_back(Trim(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return parts;
}

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
    case Collective::kReduce:
      return bytes < kReduceSmallBytes ? "binomial" : "ring";
    case Collective::kBroadcast:
      return bytes < kBroadcastSmallBytes ? "binomial" : "ring";
    case Collective::kAllGather:
      if (total >= kAllGatherSmallBytes) return "ring";
      return IsPowerOfTwo(spec.size) ? "recursive_doubling" : "bruck";
    case Collective::kReduceScatter:
      // Small: lg p rounds where the world allows, else pairwise (same terms as the ring,
      // but no forwarding chain, so a slow rank delays only its own peers). Large: the
      // ring keeps every link busy with neighbour-only traffic.
      if (total >= kReduceScatterSmallBytes) return "ring";
      return IsPowerOfTwo(spec.size) ? "recursive_halving" : "pairwise";
    case Collective::kAllToAll:
      return total < kAllToAllSmallBytes ? "bruck" : "pairwise";
    case Collective::kGather:
    case Collective::kScatter:
      return total < kGatherScatterSmallBytes ? "binomial" : "linear";
    case Collective::kBarrier:
      return "dissemination";
  }
  return "";
}

}  // namespace

Result<Planner> Planner::Create(const std::string& algo_override) {
  Planner planner;
  if (Trim(algo_override).empty()) return planner;
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
    const std::string coll_name = Trim(std::string_view(entry).substr(0, colon));
    const std::string algo_name = Trim(std::string_view(entry).substr(colon + 1));
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
  const CollectiveSpec& spec = request.spec;
  WEFT_RETURN_IF_ERROR(ValidateSpec(spec));
  const std::string& forced = override_by_coll_[static_cast<int>(spec.coll)];
  if (!forced.empty()) {
    const Algorithm* algorithm = FindAlgorithm(spec.coll, forced);
    if (algorithm != nullptr && algorithm->supports(spec)) return algorithm;
  }
  const Algorithm* chosen = FindAlgorithm(spec.coll, DefaultName(spec, request.elem_size));
  if (chosen != nullptr && chosen->supports(spec)) return chosen;
  // Safety net: the first registered algorithm that supports the spec.
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll == spec.coll && algorithm.supports(spec)) return &algorithm;
  }
  return Internal(
      fmt::format("no algorithm supports {} on {} ranks", CollectiveName(spec.coll), spec.size));
}

}  // namespace weft::sched
