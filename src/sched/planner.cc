// WEFT_ALGO parsing and the default algorithm choice.
#include "sched/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

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

// ---- The cost model -------------------------------------------------------------

// One step in which every rank r with partner[r] >= 0 sends `bytes` to it, all at once.
// Messages inside a host run in parallel at the intra figures; messages leaving a host
// share its link, so the host with the most leaving messages (k) sets the inter time.
double StepUs(const Topology& t, const std::vector<int>& partner, double bytes,
              const CostModel& c) {
  std::vector<int> leaving(t.NumHosts(), 0);
  bool intra = false;
  for (size_t r = 0; r < partner.size(); ++r) {
    const int p = partner[r];
    if (p < 0) continue;
    if (t.host_of[p] == t.host_of[r]) {
      intra = true;
    } else {
      ++leaving[t.host_of[r]];
    }
  }
  const int k = leaving.empty() ? 0 : *std::max_element(leaving.begin(), leaving.end());
  // Gbit/s -> bytes per microsecond: gbps * 1e9 / 8 / 1e6 = gbps * 125.
  double us = 0;
  if (intra) us = c.intra_alpha_us + bytes / (c.intra_gbps * 125.0);
  if (k > 0) us = std::max(us, c.inter_alpha_us + k * bytes / (c.inter_gbps * 125.0));
  return us;
}

int FloorPow2Int(int n) {
  int p = 1;
  while (p * 2 <= n) p <<= 1;
  return p;
}

// Recursive doubling and Rabenseifner, as their files build them: the first 2·rem ranks
// (rem = p - p2, p2 the largest power of two <= p) fold pairwise, even onto odd, and get
// the result back the same way; the p2 remaining ranks (new rank i is real rank 2i+1
// for i < rem, i + rem after) exchange with new rank ^ mask. Recursive doubling moves
// whole messages for mask = 1, 2, 4, ...; Rabenseifner's reduce-scatter halves them for
// mask = p2/2 .. 1 (the largest half goes the farthest) and its allgather retraces it.
double ButterflyUs(const Topology& t, double whole, const CostModel& c, bool halving) {
  const int p = static_cast<int>(t.host_of.size());
  const int p2 = FloorPow2Int(p);
  const int rem = p - p2;
  auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };
  double us = 0;
  if (rem > 0) {
    std::vector<int> fold(p, -1);
    for (int r = 0; r < 2 * rem; r += 2) fold[r] = r + 1;
    us += 2 * StepUs(t, fold, whole, c);
  }
  double bytes = whole;
  for (int k = 1; k < p2; k <<= 1) {
    const int mask = halving ? p2 / 2 / k : k;
    std::vector<int> partner(p, -1);
    for (int v = 0; v < p2; ++v) partner[real(v)] = real(v ^ mask);
    if (halving) bytes /= 2;
    us += (halving ? 2 : 1) * StepUs(t, partner, bytes, c);
  }
  return us;
}

double HierarchicalUs(const Topology& t, double bytes, const CostModel& c) {
  const auto hosts = t.Hosts();
  const int p = static_cast<int>(t.host_of.size());
  const int num_hosts = static_cast<int>(hosts.size());
  int m = p, most = 0;
  for (const auto& h : hosts) {
    m = std::min(m, static_cast<int>(h.size()));
    most = std::max(most, static_cast<int>(h.size()));
  }
  double us = 0;
  // Fold and unfold of extras, one extra per active per round.
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
  // Intra-host reduce-scatter and allgather: 2(m-1) ring steps of bytes/m.
  std::vector<int> ring(p, -1), rail(p, -1);
  for (int hp = 0; hp < num_hosts; ++hp) {
    for (int i = 0; i < m; ++i) {
      ring[hosts[hp][i]] = hosts[hp][(i + 1) % m];
      rail[hosts[hp][i]] = hosts[(hp + 1) % num_hosts][i];
    }
  }
  if (m > 1) us += 2 * (m - 1) * StepUs(t, ring, bytes / m, c);
  // Inter-host ring allreduce per rail: 2(H-1) steps of bytes/(m H).
  if (num_hosts > 1) us += 2 * (num_hosts - 1) * StepUs(t, rail, bytes / m / num_hosts, c);
  return us;
}

// True when the topology makes the hierarchical choice worth weighing: more than one
// host, and more than one rank on some host.
bool IsMultiHostShared(const CollectiveSpec& spec) {
  if (spec.topology == nullptr || spec.topology->host_of.size() != static_cast<size_t>(spec.size))
    return false;
  const auto hosts = spec.topology->Hosts();
  if (hosts.size() < 2) return false;
  return std::any_of(hosts.begin(), hosts.end(), [](const auto& h) { return h.size() > 1; });
}

std::string FormatBytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0)
    return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// For the equal-host rail algorithms (allgather, reduce-scatter hierarchical): each rank's
// partner in the ring inside its host, and along its rail to the next host.
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

// Hierarchical allgather and reduce-scatter (equal hosts, L ranks each, H hosts) cost the
// same, in mirror order: H-1 rail steps of one block across hosts, and L-1 steps of H
// messages of one block each (H latencies) inside the host.
double RailAlgorithmUs(const Topology& t, double block, const CostModel& c) {
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  const auto [ring, rail] = RingAndRailPartners(hosts);
  double us = 0;
  if (num_hosts > 1) us += (num_hosts - 1) * StepUs(t, rail, block, c);
  if (local > 1) {
    us += (local - 1) *
          (StepUs(t, ring, num_hosts * block, c) + (num_hosts - 1) * c.intra_alpha_us);
  }
  return us;
}

}  // namespace

double EstimateAllReduceUs(const std::string& name, const Topology& t, double bytes,
                           const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  if (name == "hierarchical") return HierarchicalUs(t, bytes, c);
  if (name == "recursive_doubling") return ButterflyUs(t, bytes, c, false);
  if (name == "rabenseifner") return ButterflyUs(t, bytes, c, true);
  if (name == "ring") {
    std::vector<int> next(p);
    for (int r = 0; r < p; ++r) next[r] = (r + 1) % p;
    return 2 * (p - 1) * StepUs(t, next, bytes / p, c);
  }
  if (name == "binomial") {
    // Reduce then broadcast: lg p levels of whole messages each way.
    double us = 0;
    for (int d = 1; d < p; d <<= 1) {
      std::vector<int> partner(p, -1);
      for (int r = 0; r < p; ++r) {
        if (r % (2 * d) == d) partner[r] = r - d;
      }
      us += 2 * StepUs(t, partner, bytes, c);
    }
    return us;
  }
  return -1;
}

double EstimateAllGatherUs(const std::string& name, const Topology& t, double block,
                           const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  double us = 0;
  if (name == "ring") {
    std::vector<int> next(p);
    for (int r = 0; r < p; ++r) next[r] = (r + 1) % p;
    return (p - 1) * StepUs(t, next, block, c);
  }
  if (name == "recursive_doubling" || name == "bruck") {
    // Step k moves min(d, p - d) blocks to a partner at distance d = 2^k (xor for
    // recursive doubling, r - d for Bruck).
    const bool bruck = name == "bruck";
    for (int d = 1; d < p; d <<= 1) {
      std::vector<int> partner(p, -1);
      for (int r = 0; r < p; ++r) partner[r] = bruck ? (r - d + p) % p : (r ^ d) < p ? r ^ d : -1;
      us += StepUs(t, partner, block * std::min(d, p - d), c);
    }
    return us;
  }
  if (name == "hierarchical") return RailAlgorithmUs(t, block, c);
  return -1;
}

double EstimateReduceScatterUs(const std::string& name, const Topology& t, double block,
                               const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  double us = 0;
  if (name == "ring" || name == "pairwise") {
    // Ring: p-1 steps to r+1. Pairwise: step k to r+k.
    for (int k = 1; k < p; ++k) {
      std::vector<int> partner(p);
      for (int r = 0; r < p; ++r) partner[r] = (r + (name == "ring" ? 1 : k)) % p;
      us += StepUs(t, partner, block, c);
    }
    return us;
  }
  if (name == "recursive_halving") {
    if ((p & (p - 1)) != 0) return -1;
    for (int mask = p / 2; mask > 0; mask /= 2) {
      std::vector<int> partner(p);
      for (int r = 0; r < p; ++r) partner[r] = r ^ mask;
      us += StepUs(t, partner, mask * block, c);
    }
    return us;
  }
  if (name == "hierarchical") return RailAlgorithmUs(t, block, c);
  return -1;
}

double EstimateBroadcastUs(const std::string& name, const Topology& t, int root, size_t count,
                           size_t elem_size, const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1 || count == 0) return 0;
  const double bytes = double(count) * double(elem_size);
  auto real = [&](int vr) { return (vr + root) % p; };
  double us = 0;
  if (name == "binomial" || name == "scatter_allgather") {
    // Binomial tree from the root: at mask m (largest first) the vranks that are
    // multiples of 2m hold the data and send to vr + m the whole message, or for the
    // scatter the chunks of that subtree.
    const bool scatter = name == "scatter_allgather";
    for (int mask = algo::CeilPow2(p) / 2; mask > 0; mask /= 2) {
      std::vector<int> partner(p, -1);
      for (int vr = 0; vr + mask < p; vr += 2 * mask) partner[real(vr)] = real(vr + mask);
      const int subtree = std::min(mask, p - mask);
      us += StepUs(t, partner, scatter ? bytes * subtree / p : bytes, c);
    }
    if (scatter) {
      std::vector<int> next(p);
      for (int r = 0; r < p; ++r) next[r] = (r + 1) % p;
      us += (p - 1) * StepUs(t, next, bytes / p, c);
    }
    return us;
  }
  if (name == "ring") {
    // broadcast_ring's segments; once the pipe is full every chain link is busy.
    const size_t segs =
        std::min(count, std::max<size_t>(p, (count + 16383) / 16384));
    std::vector<int> chain(p, -1);
    for (int vr = 0; vr + 1 < p; ++vr) chain[real(vr)] = real(vr + 1);
    return double(segs + p - 2) * StepUs(t, chain, bytes / double(segs), c);
  }
  if (name == "hierarchical") {
    // As broadcast_hierarchical.cc builds it, actives taken as each host's first m ranks.
    const auto hosts = t.Hosts();
    const int num_hosts = static_cast<int>(hosts.size());
    const int root_host = t.host_of[root];
    int m = p;
    bool uneven = false;
    for (const auto& h : hosts) {
      m = std::min(m, static_cast<int>(h.size()));
      uneven = uneven || h.size() != hosts[0].size();
    }
    const size_t chunk = (count + m - 1) / m;
    const double chunk_bytes = double(chunk) * double(elem_size);
    // 1. Scatter: the root writes m-1 chunks over shm.
    if (m > 1) us += c.intra_alpha_us + (m - 1) * chunk_bytes / (c.intra_gbps * 125.0);
    // 2. Every rail at once: a binomial tree over host positions, or the pipelined chain.
    auto rail_step = [&](auto&& next_position, double step_bytes) {
      std::vector<int> partner(p, -1);
      for (int q = 0; q < num_hosts; ++q) {
        const int to = next_position(q);
        if (to < 0) continue;
        for (int i = 0; i < m; ++i) {
          partner[hosts[(q + root_host) % num_hosts][i]] = hosts[(to + root_host) % num_hosts][i];
        }
      }
      return StepUs(t, partner, step_bytes, c);
    };
    const size_t segs = algo::HierarchicalBroadcastSegments(chunk, num_hosts);
    if (num_hosts > 1 && segs == 1) {
      for (int mask = algo::CeilPow2(num_hosts) / 2; mask > 0; mask /= 2) {
        us += rail_step([&](int q) { return q % (2 * mask) == 0 && q + mask < num_hosts ? q + mask : -1; },
                        chunk_bytes);
      }
    } else if (num_hosts > 1) {
      us += double(segs + num_hosts - 2) *
            rail_step([&](int q) { return q + 1 < num_hosts ? q + 1 : -1; },
                      chunk_bytes / double(segs));
    }
    // 3. Ring allgather of the chunks inside each host.
    std::vector<int> ring(p, -1);
    for (const auto& h : hosts) {
      for (int i = 0; i < m; ++i) ring[h[i]] = h[(i + 1) % m];
    }
    if (m > 1) us += (m - 1) * StepUs(t, ring, chunk_bytes, c);
    // 4. The whole message to the extras.
    if (uneven) us += c.intra_alpha_us + bytes / (c.intra_gbps * 125.0);
    return us;
  }
  return -1;
}

Result<CostModel> CostModel::Parse(const std::string& text) {
  CostModel model;
  for (const std::string& entry : SplitCommas(text)) {
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string key = Trim(std::string_view(entry).substr(0, eq));
    double* field = nullptr;
    if (key == "intra_alpha_us") field = &model.intra_alpha_us;
    if (key == "intra_gbps") field = &model.intra_gbps;
    if (key == "inter_alpha_us") field = &model.inter_alpha_us;
    if (key == "inter_gbps") field = &model.inter_gbps;
    if (field == nullptr || eq == std::string::npos) {
      return InvalidArgument(fmt::format(
          "WEFT_COST_MODEL: '{}' is not key=value with a key among intra_alpha_us, intra_gbps, "
          "inter_alpha_us, inter_gbps",
          entry));
    }
    const std::string value = Trim(std::string_view(entry).substr(eq + 1));
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool is_alpha = key.find("alpha") != std::string::npos;
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0 ||
        (v == 0 && !is_alpha)) {
      return InvalidArgument(fmt::format("WEFT_COST_MODEL: {} needs a {} number, got '{}'", key,
                                         is_alpha ? "non-negative" : "positive", value));
    }
    *field = v;
  }
  return model;
}

std::string CostModel::ToString() const {
  return fmt::format("intra {} us {} Gbit/s, inter {} us {} Gbit/s", intra_alpha_us, intra_gbps,
                     inter_alpha_us, inter_gbps);
}

Result<Planner> Planner::Create(const std::string& algo_override, const CostModel& costs) {
  Planner planner;
  planner.costs_ = costs;
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
  WEFT_ASSIGN_OR_RETURN(PlanChoice choice, Explain(request));
  return choice.algorithm;
}

Result<PlanChoice> Planner::Explain(const PlanRequest& request) const {
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
  const Algorithm* chosen = FindAlgorithm(spec.coll, DefaultName(spec, request.elem_size));
  if (chosen != nullptr && chosen->supports(spec)) {
    const Algorithm* hier = FindAlgorithm(spec.coll, "hierarchical");
    if (hier != nullptr && hier->supports(spec) && IsMultiHostShared(spec)) {
      const Topology& t = *spec.topology;
      // Per-rank figures for the block collectives (count is each rank's block).
      const bool per_rank =
          spec.coll == Collective::kAllGather || spec.coll == Collective::kReduceScatter;
      auto estimate = [&](const std::string& name) {
        switch (spec.coll) {
          case Collective::kAllGather:
            return EstimateAllGatherUs(name, t, double(bytes), costs_);
          case Collective::kReduceScatter:
            return EstimateReduceScatterUs(name, t, double(bytes), costs_);
          case Collective::kBroadcast:
            return EstimateBroadcastUs(name, t, spec.root, spec.count, request.elem_size, costs_);
          default:
            return EstimateAllReduceUs(name, t, double(bytes), costs_);
        }
      };
      const double flat_us = estimate(chosen->name);
      const double hier_us = estimate("hierarchical");
      const bool use_hier = hier_us >= 0 && flat_us >= 0 && hier_us < flat_us;
      return PlanChoice{
          use_hier ? hier : chosen,
          fmt::format("{}cost model for {}{} on {} ({}): hierarchical {:.1f} us, {} "
                      "{:.1f} us",
                      fallback, FormatBytes(bytes), per_rank ? " per rank" : "", t.Describe(),
                      costs_.ToString(), hier_us, chosen->name, flat_us)};
    }
    return PlanChoice{chosen,
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
