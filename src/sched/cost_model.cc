// The alpha-beta cost model (see cost_model.h): every algorithm the planner weighs,
// costed step by step as its file in algorithms/ builds it.
#include "sched/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/comma_list.h"

namespace weft::sched {
namespace {

// One step in which every message (from, to) of `bytes` is in flight at once. Messages
// inside a host run in parallel at the intra figures. Messages between hosts share the
// hosts' links, each full duplex: the host with the most messages leaving or arriving (k)
// sets the inter time, ceil(k / links) of them on its busiest link (a host's ranks spread
// over its links). Arrivals count for the many-to-one steps (a gather's root host). A
// rank that sends (or receives) f > 1 messages in the step pays f-1 more intra latencies
// for handling them (as the rail algorithms' intra steps do below).
double MessagesUs(const Topology& t, const std::vector<std::pair<int, int>>& messages, double bytes,
                  const CostModel& c) {
  std::vector<int> leaving(t.NumHosts(), 0), arriving(t.NumHosts(), 0);
  std::vector<int> sends(t.host_of.size(), 0), recvs(t.host_of.size(), 0);
  bool intra = false;
  for (const auto& [from, to] : messages) {
    ++sends[from];
    ++recvs[to];
    if (t.host_of[from] == t.host_of[to]) {
      intra = true;
    } else {
      ++leaving[t.host_of[from]];
      ++arriving[t.host_of[to]];
    }
  }
  int k = 0;
  for (size_t h = 0; h < leaving.size(); ++h) k = std::max({k, leaving[h], arriving[h]});
  int extra = 0;  // messages beyond one send and one receive at the busiest rank
  for (size_t r = 0; r < sends.size(); ++r) {
    extra = std::max(extra, std::max(0, sends[r] - 1) + std::max(0, recvs[r] - 1));
  }
  // Gbit/s -> bytes per microsecond: gbps * 1e9 / 8 / 1e6 = gbps * 125.
  double us = 0;
  if (intra) us = c.intra_alpha_us + bytes / (c.intra_gbps * 125.0);
  if (k > 0) {
    const int links = std::max(1, static_cast<int>(c.inter_links));
    const int per_link = (k + links - 1) / links;
    us = std::max(us, c.inter_alpha_us + per_link * bytes / (c.inter_gbps * 125.0));
  }
  return us + extra * c.intra_alpha_us;
}

// The same for a step in which every rank r with partner[r] >= 0 sends to it.
double StepUs(const Topology& t, const std::vector<int>& partner, double bytes,
              const CostModel& c) {
  std::vector<std::pair<int, int>> messages;
  for (size_t r = 0; r < partner.size(); ++r) {
    if (partner[r] >= 0) messages.emplace_back(static_cast<int>(r), partner[r]);
  }
  return MessagesUs(t, messages, bytes, c);
}

// One level of a binomial tree rooted at `root` over p ranks: each virtual rank that is a
// multiple of 2·mask and its child vr + mask; the parent sends (broadcast, scatter) or
// the child does (`up`: reduce, gather).
std::vector<int> TreeLevel(int p, int root, int mask, bool up) {
  std::vector<int> partner(p, -1);
  for (int vr = 0; vr + mask < p; vr += 2 * mask) {
    const int parent = (vr + root) % p, child = (vr + mask + root) % p;
    if (up) {
      partner[child] = parent;
    } else {
      partner[parent] = child;
    }
  }
  return partner;
}

// Every rank but the root sends `bytes` to it (up), or the root to every other rank.
double AllWithRootUs(const Topology& t, int root, double bytes, bool up, const CostModel& c) {
  std::vector<std::pair<int, int>> messages;
  for (int r = 0; r < static_cast<int>(t.host_of.size()); ++r) {
    if (r != root) messages.push_back(up ? std::make_pair(r, root) : std::make_pair(root, r));
  }
  return MessagesUs(t, messages, bytes, c);
}

// A pipelined chain: `segs` segments of `seg_bytes` go down `hops` in order (hop i's
// sends as a partner vector). The first segment pays every hop in turn (the fill); each
// further one arrives one step of all hops at once later (every link busy, the slowest
// setting the pace). Counting every round as the slowest hop, as a lock-step model
// would, charges a chain whose hops are mostly shm as if every hop left the host.
double PipelineUs(const Topology& t, const std::vector<std::vector<int>>& hops, double seg_bytes,
                  size_t segs, const CostModel& c) {
  if (hops.empty() || segs == 0) return 0;
  std::vector<int> all(t.host_of.size(), -1);
  double fill = 0;
  for (const std::vector<int>& hop : hops) {
    fill += StepUs(t, hop, seg_bytes, c);
    for (size_t r = 0; r < hop.size(); ++r) {
      if (hop[r] >= 0) all[r] = hop[r];
    }
  }
  return fill + double(segs - 1) * StepUs(t, all, seg_bytes, c);
}

int FloorPow2Int(int n) {
  int p = 1;
  while (p * 2 <= n) p <<= 1;
  return p;
}

// The partner vector (StepUs's) of a step in which each of n
// participants q exchanges with partner_of(q) (-1: sits out), rank_at(q, i) with
// rank_at(partner_of(q), i) for i < width.
template <typename RankAt, typename PartnerOf>
std::vector<int> ParticipantPartners(const Topology& t, int n, int width, const RankAt& rank_at,
                                     const PartnerOf& partner_of) {
  std::vector<int> partner(t.host_of.size(), -1);
  for (int q = 0; q < n; ++q) {
    const int other = partner_of(q);
    if (other < 0) continue;
    for (int i = 0; i < width; ++i) partner[rank_at(q, i)] = rank_at(other, i);
  }
  return partner;
}

// Recursive doubling and Rabenseifner, as their files build them: the first 2·rem
// participants (rem = n - n2, n2 the largest power of two <= n) fold pairwise, even onto
// odd, and get the result back the same way; the n2 remaining (new index i is
// participant 2i+1 for i < rem, i + rem after) exchange with new index ^ mask. Recursive
// doubling moves whole messages for mask = 1, 2, 4, ...; Rabenseifner's reduce-scatter
// halves them for mask = n2/2 .. 1 (the largest half goes the farthest) and its
// allgather retraces it. Participant q is `width` ranks that exchange side by side,
// rank_at(q, i) with rank_at(other, i): one rank each for the flat algorithms, a host's
// m active ranks for the hierarchical allreduce's Rabenseifner rails.
template <typename RankAt>
double ButterflyUs(const Topology& t, int n, int width, const RankAt& rank_at, double whole,
                   const CostModel& c, bool halving) {
  const int n2 = FloorPow2Int(n);
  const int rem = n - n2;
  auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };
  auto step_us = [&](auto&& partner_of, double bytes) {
    return StepUs(t, ParticipantPartners(t, n, width, rank_at, partner_of), bytes, c);
  };
  double us = 0;
  if (rem > 0) {
    us += 2 * step_us([&](int q) { return q < 2 * rem && q % 2 == 0 ? q + 1 : -1; }, whole);
  }
  std::vector<int> index_of(n, -1);  // participant -> new index
  for (int v = 0; v < n2; ++v) index_of[real(v)] = v;
  double bytes = whole;
  for (int k = 1; k < n2; k <<= 1) {
    const int mask = halving ? n2 / 2 / k : k;
    if (halving) bytes /= 2;
    us += (halving ? 2 : 1) *
          step_us([&](int q) { return index_of[q] < 0 ? -1 : real(index_of[q] ^ mask); }, bytes);
  }
  return us;
}

// The flat butterflies: every rank its own participant.
double ButterflyUs(const Topology& t, double whole, const CostModel& c, bool halving) {
  return ButterflyUs(
      t, static_cast<int>(t.host_of.size()), 1, [](int q, int) { return q; }, whole, c, halving);
}

double HierarchicalUs(const Topology& t, double bytes, const CostModel& c,
                      bool rail_butterfly = false) {
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
  // Inter-host allreduce per rail: a ring's 2(H-1) steps of bytes/(m H), or Rabenseifner's.
  if (num_hosts > 1 && rail_butterfly) {
    us += ButterflyUs(
        t, num_hosts, m, [&](int hp, int i) { return hosts[hp][i]; }, bytes / m, c, true);
  } else if (num_hosts > 1) {
    us += 2 * (num_hosts - 1) * StepUs(t, rail, bytes / m / num_hosts, c);
  }
  return us;
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
// same, in mirror order: H-1 rail steps of one block across hosts, and L-1 steps inside
// the host in which each rank sends H messages of one block and receives H: as in
// MessagesUs (and the simulator), each message beyond a rank's first send and first
// receive costs one more intra latency, 2(H-1) of them.
// The L-1 steps inside the host of both rail allgathers (and the reduce-scatter's mirror):
// each rank sends H blocks to the next local rank and receives H.
double RailSetRingUs(const Topology& t, const std::vector<std::vector<int>>& hosts,
                     const std::vector<int>& ring, double block, const CostModel& c) {
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  if (local <= 1) return 0;
  return (local - 1) *
         (StepUs(t, ring, num_hosts * block, c) + 2 * (num_hosts - 1) * c.intra_alpha_us);
}

double RailAlgorithmUs(const Topology& t, double block, const CostModel& c) {
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const auto [ring, rail] = RingAndRailPartners(hosts);
  double us = 0;
  if (num_hosts > 1) us += (num_hosts - 1) * StepUs(t, rail, block, c);
  return us + RailSetRingUs(t, hosts, ring, block, c);
}

// The hierarchical allgather with recursive-doubling rails: lg H rail steps in which a
// host's group of `mask` hosts (with the hosts folded into them) goes to the partner
// group as one message per block, the fold and unfold of the hosts beyond a power of
// two, then the same ring of rail sets inside the host. A rail step's k messages to one
// peer: each after the first waits an intra latency to be posted (the per-message
// overhead of RailAlgorithmUs, a send and a receive each), but that wait overlaps the
// wire time of the blocks already moving, so it costs only where it exceeds a block's
// wire time (as the simulator's engine has it: sim/engine.h).
double RailDoublingUs(const Topology& t, double block, const CostModel& c) {
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  const auto ring = RingAndRailPartners(hosts).first;
  const int pof2 = FloorPow2Int(num_hosts);
  const int rem = num_hosts - pof2;
  // One rail step: host position hp exchanges `blocks` blocks with partner_of(hp) (-1:
  // none), every local rank with its counterpart.
  auto rail_step = [&](const auto& partner_of, int blocks) {
    const std::vector<int> partner = ParticipantPartners(
        t, num_hosts, local, [&](int hp, int i) { return hosts[hp][i]; }, partner_of);
    const double wire_one = StepUs(t, partner, block, c) - c.inter_alpha_us;
    return StepUs(t, partner, blocks * block, c) +
           (blocks - 1) * std::max(0.0, 2 * c.intra_alpha_us - wire_one);
  };
  double us = 0;
  if (rem > 0) {
    us += rail_step([&](int hp) { return hp >= pof2 ? hp - pof2 : -1; }, 1);
    us += rail_step([&](int hp) { return hp < rem ? hp + pof2 : -1; }, num_hosts - 1);
  }
  for (int mask = 1; mask < pof2; mask <<= 1) {
    // The group starting at host 0 carries the most folded hosts.
    const int blocks = mask + std::min(mask, rem);
    us += rail_step([&](int hp) { return hp < pof2 ? hp ^ mask : -1; }, blocks);
  }
  return us + RailSetRingUs(t, hosts, ring, block, c);
}

}  // namespace

double EstimateAllReduceUs(const std::string& name, const Topology& t, double bytes,
                           const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  if (name == "hierarchical") return HierarchicalUs(t, bytes, c);
  if (name == "hierarchical_rabenseifner") return HierarchicalUs(t, bytes, c, true);
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
  if (name == "hierarchical_doubling") return RailDoublingUs(t, block, c);
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
    // Binomial tree from the root, largest mask first: the holders send the child the
    // whole message, or for the scatter the chunks of the child's subtree.
    const bool scatter = name == "scatter_allgather";
    for (int mask = algo::CeilPow2(p) / 2; mask > 0; mask /= 2) {
      const int subtree = std::min(mask, p - mask);
      us += StepUs(t, TreeLevel(p, root, mask, false), scatter ? bytes * subtree / p : bytes, c);
    }
    if (scatter) {
      std::vector<int> next(p);
      for (int r = 0; r < p; ++r) next[r] = (r + 1) % p;
      us += (p - 1) * StepUs(t, next, bytes / p, c);
    }
    return us;
  }
  if (name == "ring") {
    // broadcast_ring's chain root, root+1, ..., root-1, cut into its segments.
    const size_t segs = algo::RingBroadcastSegments(count, p);
    std::vector<std::vector<int>> hops;
    for (int vr = 0; vr + 1 < p; ++vr) {
      hops.emplace_back(p, -1);
      hops.back()[real(vr)] = real(vr + 1);
    }
    return PipelineUs(t, hops, bytes / double(segs), segs, c);
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
    // 2. Every rail at once: a binomial tree over host positions (each level one step in
    //    which every sending host's m rails leave it together), or the pipelined chain.
    auto tree_level = [&](int mask) {
      std::vector<int> partner(p, -1);
      for (int q = 0; q + mask < num_hosts; q += 2 * mask) {
        for (int i = 0; i < m; ++i) {
          partner[hosts[(q + root_host) % num_hosts][i]] =
              hosts[(q + mask + root_host) % num_hosts][i];
        }
      }
      return StepUs(t, partner, chunk_bytes, c);
    };
    const size_t segs = algo::HierarchicalBroadcastSegments(chunk, num_hosts);
    if (num_hosts > 1 && segs == 1) {
      for (int mask = algo::CeilPow2(num_hosts) / 2; mask > 0; mask /= 2) us += tree_level(mask);
    } else if (num_hosts > 1) {
      // The chain over host positions; hop q carries all m rails' segments out of host
      // q at once, so they share its link.
      std::vector<std::vector<int>> hops;
      for (int q = 0; q + 1 < num_hosts; ++q) {
        hops.emplace_back(p, -1);
        for (int i = 0; i < m; ++i) {
          hops.back()[hosts[(q + root_host) % num_hosts][i]] =
              hosts[(q + 1 + root_host) % num_hosts][i];
        }
      }
      us += PipelineUs(t, hops, chunk_bytes / double(segs), segs, c);
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

Result<CostModel> CostModel::Parse(const std::string& text, std::vector<std::string>* given) {
  CostModel model;
  std::vector<std::string> keys;
  for (const std::string& entry : SplitCommas(text)) {
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string key = TrimLower(std::string_view(entry).substr(0, eq));
    double* field = nullptr;
    if (key == "intra_alpha_us") field = &model.intra_alpha_us;
    if (key == "intra_gbps") field = &model.intra_gbps;
    if (key == "inter_alpha_us") field = &model.inter_alpha_us;
    if (key == "inter_gbps") field = &model.inter_gbps;
    if (key == "inter_links") field = &model.inter_links;
    if (field == nullptr || eq == std::string::npos) {
      return InvalidArgument(fmt::format(
          "WEFT_COST_MODEL: '{}' is not key=value with a key among intra_alpha_us, intra_gbps, "
          "inter_alpha_us, inter_gbps, inter_links",
          entry));
    }
    const std::string value = TrimLower(std::string_view(entry).substr(eq + 1));
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool is_alpha = key.find("alpha") != std::string::npos;
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0 ||
        (v == 0 && !is_alpha)) {
      return InvalidArgument(fmt::format("WEFT_COST_MODEL: {} needs a {} number, got '{}'", key,
                                         is_alpha ? "non-negative" : "positive", value));
    }
    if (key == "inter_links" && (v != std::floor(v) || v > 1024)) {
      return InvalidArgument(fmt::format(
          "WEFT_COST_MODEL: inter_links needs a whole number 1..1024, got '{}'", value));
    }
    *field = v;
    keys.push_back(key);
  }
  if (given != nullptr) *given = std::move(keys);
  return model;
}

std::string CostModel::ToSpec() const {
  return fmt::format(
      "intra_alpha_us={:g},intra_gbps={:g},inter_alpha_us={:g},inter_gbps={:g},"
      "inter_links={:g}",
      intra_alpha_us, intra_gbps, inter_alpha_us, inter_gbps, inter_links);
}

std::string CostModel::ToString() const {
  return fmt::format("intra {} us {} Gbit/s, inter {} us {} Gbit/s{}", intra_alpha_us, intra_gbps,
                     inter_alpha_us, inter_gbps,
                     inter_links > 1 ? fmt::format(" x {} links", inter_links) : "");
}

double EstimateReduceUs(const std::string& name, const Topology& t, int root, double bytes,
                        const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  double us = 0;
  if (name == "binomial") {
    // Leaves first: at mask 1, 2, 4, ... the child vr + mask sends its partial sum up.
    for (int mask = 1; mask < p; mask <<= 1)
      us += StepUs(t, TreeLevel(p, root, mask, true), bytes, c);
    return us;
  }
  if (name == "ring") {
    // A ring reduce-scatter (p-1 steps of a chunk), then every chunk straight to the root.
    std::vector<int> next(p);
    for (int r = 0; r < p; ++r) next[r] = (r + 1) % p;
    return (p - 1) * StepUs(t, next, bytes / p, c) + AllWithRootUs(t, root, bytes / p, true, c);
  }
  return -1;
}

double EstimateGatherUs(const std::string& name, const Topology& t, int root, double block,
                        const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  if (name == "linear") return AllWithRootUs(t, root, block, true, c);
  if (name == "binomial") {
    // Leaves first: at mask m the child sends its subtree's blocks (up to m; a clipped
    // subtree sends fewer, costed as the largest).
    double us = 0;
    for (int mask = 1; mask < p; mask <<= 1) {
      us += StepUs(t, TreeLevel(p, root, mask, true), block * std::min(mask, p - mask), c);
    }
    return us;
  }
  return -1;
}

double EstimateScatterUs(const std::string& name, const Topology& t, int root, double block,
                         const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  if (name == "linear") return AllWithRootUs(t, root, block, false, c);
  if (name == "binomial") {
    // The gather's mirror: largest mask first, the child's subtree of blocks down.
    double us = 0;
    for (int mask = algo::CeilPow2(p) / 2; mask > 0; mask /= 2) {
      us += StepUs(t, TreeLevel(p, root, mask, false), block * std::min(mask, p - mask), c);
    }
    return us;
  }
  return -1;
}

double EstimateAllToAllUs(const std::string& name, const Topology& t, double block,
                          const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  if (p <= 1) return 0;
  double us = 0;
  if (name == "pairwise") {
    // Step k: r sends its block for r + k.
    for (int k = 1; k < p; ++k) {
      std::vector<int> partner(p);
      for (int r = 0; r < p; ++r) partner[r] = (r + k) % p;
      us += StepUs(t, partner, block, c);
    }
    return us;
  }
  if (name == "bruck") {
    // Bit d: the slots whose index has bit d set (about half of them) go to r + d.
    for (int d = 1; d < p; d <<= 1) {
      int moved = 0;
      for (int i = 0; i < p; ++i) moved += (i & d) != 0;
      std::vector<int> partner(p);
      for (int r = 0; r < p; ++r) partner[r] = (r + d) % p;
      us += StepUs(t, partner, block * moved, c);
    }
    return us;
  }
  return -1;
}

double EstimateUs(const std::string& name, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs) {
  if (spec.topology == nullptr || spec.topology->host_of.size() != static_cast<size_t>(spec.size))
    return -1;
  const Topology& t = *spec.topology;
  // count is the whole buffer for allreduce, reduce and broadcast, one rank's block for
  // allgather, reducescatter, gather and scatter, the block for each peer for alltoall.
  const double bytes = double(spec.count) * double(elem_size);
  switch (spec.coll) {
    case Collective::kAllReduce: return EstimateAllReduceUs(name, t, bytes, costs);
    case Collective::kAllGather: return EstimateAllGatherUs(name, t, bytes, costs);
    case Collective::kReduceScatter: return EstimateReduceScatterUs(name, t, bytes, costs);
    case Collective::kBroadcast:
      return EstimateBroadcastUs(name, t, spec.root, spec.count, elem_size, costs);
    case Collective::kReduce: return EstimateReduceUs(name, t, spec.root, bytes, costs);
    case Collective::kGather: return EstimateGatherUs(name, t, spec.root, bytes, costs);
    case Collective::kScatter: return EstimateScatterUs(name, t, spec.root, bytes, costs);
    case Collective::kAllToAll: return EstimateAllToAllUs(name, t, bytes, costs);
    case Collective::kBarrier: return -1;
  }
  return -1;
}

}  // namespace weft::sched
