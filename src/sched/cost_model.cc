// The alpha-beta cost model's primitives and entry points (see cost_model.h). The
// algorithms' estimates live in their files in algorithms/, written with these.
#include "sched/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/algorithms/builder.h"
#include "sched/comma_list.h"
#include "sched/registry.h"

namespace weft::sched {

// One step in which every message (from, to) of `bytes` is in flight at once. Messages
// inside a host run in parallel at the intra figures. Messages between hosts share the
// hosts' links, each full duplex, and the host where they are busiest sets the inter time
// (InterLinkLoad). Arrivals count for the many-to-one steps (a gather's root host). A
// rank that sends (or receives) f > 1 messages in the step pays f-1 more intra latencies
// for handling them (as the rail algorithms' intra steps do: algorithms/rail_view.cc).
double MessagesUs(const Topology& t, const std::vector<std::pair<int, int>>& messages, double bytes,
                  const CostModel& c) {
  const int hosts = t.NumHosts();
  const size_t n = t.host_of.size();
  std::vector<int> leaving(hosts, 0), arriving(hosts, 0), ranks(hosts, 0);
  // busiest_rank[h]: the most messages between hosts one rank of h sends or receives.
  std::vector<int> busiest_rank(hosts, 0);
  std::vector<int> sends(n, 0), recvs(n, 0), sends_out(n, 0), recvs_in(n, 0);
  for (int h : t.host_of) ++ranks[h];
  bool intra = false, inter = false;
  for (const auto& [from, to] : messages) {
    ++sends[from];
    ++recvs[to];
    const int hf = t.host_of[from], ht = t.host_of[to];
    if (hf == ht) {
      intra = true;
      continue;
    }
    inter = true;
    ++leaving[hf];
    ++arriving[ht];
    busiest_rank[hf] = std::max(busiest_rank[hf], ++sends_out[from]);
    busiest_rank[ht] = std::max(busiest_rank[ht], ++recvs_in[to]);
  }
  int extra = 0;  // messages beyond one send and one receive at the busiest rank
  for (size_t r = 0; r < n; ++r) {
    extra = std::max(extra, std::max(0, sends[r] - 1) + std::max(0, recvs[r] - 1));
  }
  // Gbit/s -> bytes per microsecond: gbps * 1e9 / 8 / 1e6 = gbps * 125.
  double us = 0;
  if (intra) us = c.intra_alpha_us + bytes / (c.intra_gbps * 125.0);
  if (inter) {
    double load = 0;
    for (int h = 0; h < hosts; ++h) {
      load = std::max(load, InterLinkLoad(std::max(leaving[h], arriving[h]), busiest_rank[h],
                                          ranks[h], c.inter_links));
    }
    us = std::max(us, c.inter_alpha_us + load * bytes / (c.inter_gbps * 125.0));
  }
  return us + extra * c.intra_alpha_us;
}

double InterLinkLoad(int k, int busiest_rank, int ranks, double inter_links) {
  if (k <= 0) return 0;
  const int links = std::max(1, static_cast<int>(inter_links));
  // At least one link per rank: each rank owns links / ranks of them (rounded down), as
  // the ofi transport's rails (WEFT_OFI_NRAILS=auto: the NICs nearest a rank's device)
  // and the simulator's rail policy give them, and stripes its messages over its own.
  if (ranks > 0 && links >= ranks) return double(busiest_rank) / (links / ranks);
  // Fewer links than ranks: a host's messages spread over its links.
  return (k + links - 1) / links;
}

double StepUs(const Topology& t, const std::vector<int>& partner, double bytes,
              const CostModel& c) {
  std::vector<std::pair<int, int>> messages;
  for (size_t r = 0; r < partner.size(); ++r) {
    if (partner[r] >= 0) messages.emplace_back(static_cast<int>(r), partner[r]);
  }
  return MessagesUs(t, messages, bytes, c);
}

std::vector<int> RingPartners(int p, int distance) {
  std::vector<int> partner(p);
  for (int r = 0; r < p; ++r) partner[r] = algo::RingPeer(r, p, distance);
  return partner;
}

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

double AllWithRootUs(const Topology& t, int root, double bytes, bool up, const CostModel& c) {
  std::vector<std::pair<int, int>> messages;
  for (int r = 0; r < static_cast<int>(t.host_of.size()); ++r) {
    if (r != root) messages.push_back(up ? std::make_pair(r, root) : std::make_pair(root, r));
  }
  return MessagesUs(t, messages, bytes, c);
}

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

double StaggeredUs(const std::vector<SegmentRound>& rounds, int segments, int stagger) {
  const long per_segment = static_cast<long>(rounds.size());
  if (per_segment == 0 || segments < 1) return 0;
  stagger = std::max(stagger, 1);
  const long total = static_cast<long>(segments - 1) * stagger + per_segment;
  double us = 0;
  for (long g = 0; g < total; ++g) {
    double intra = 0, inter = 0;
    // The copies with a round in g: k with 0 <= g - k * stagger < per_segment.
    const long k_last = std::min<long>(segments - 1, g / stagger);
    for (long k = k_last; k >= 0 && g - k * stagger < per_segment; --k) {
      const SegmentRound& r = rounds[g - k * stagger];
      (r.inter ? inter : intra) += r.us;
    }
    us += std::max(intra, inter);
  }
  return us;
}

int CheapestSegments(size_t most, const std::function<double(int)>& us_of) {
  int best = 1;
  double best_us = us_of(1);
  for (int segments = 2; segments <= 32 && static_cast<size_t>(segments) <= most; segments *= 2) {
    const double us = us_of(segments);
    if (us < best_us) best = segments, best_us = us;
  }
  return best;
}

std::vector<int> ParticipantPartners(const Topology& t, int n, int width, const RankAt& rank_at,
                                     const std::function<int(int)>& partner_of) {
  std::vector<int> partner(t.host_of.size(), -1);
  for (int q = 0; q < n; ++q) {
    const int other = partner_of(q);
    if (other < 0) continue;
    for (int i = 0; i < width; ++i) partner[rank_at(q, i)] = rank_at(other, i);
  }
  return partner;
}

std::vector<double> ButterflyStepsUs(const Topology& t, int n, int width, const RankAt& rank_at,
                                     double whole, const CostModel& c, bool halving) {
  const int n2 = algo::FloorPow2(n);
  const int rem = n - n2;
  auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };
  auto step_us = [&](const std::function<int(int)>& partner_of, double bytes) {
    return StepUs(t, ParticipantPartners(t, n, width, rank_at, partner_of), bytes, c);
  };
  double fold = 0;
  if (rem > 0) {
    fold = step_us([&](int q) { return q < 2 * rem && q % 2 == 0 ? q + 1 : -1; }, whole);
  }
  std::vector<int> index_of(n, -1);  // participant -> new index
  for (int v = 0; v < n2; ++v) index_of[real(v)] = v;
  std::vector<double> exchanges;
  double bytes = whole;
  for (int k = 1; k < n2; k <<= 1) {
    const int mask = halving ? n2 / 2 / k : k;
    if (halving) bytes /= 2;
    exchanges.push_back(
        step_us([&](int q) { return index_of[q] < 0 ? -1 : real(index_of[q] ^ mask); }, bytes));
  }
  std::vector<double> steps;
  if (rem > 0) steps.push_back(fold);
  steps.insert(steps.end(), exchanges.begin(), exchanges.end());
  if (halving) steps.insert(steps.end(), exchanges.rbegin(), exchanges.rend());
  if (rem > 0) steps.push_back(fold);
  return steps;
}

double ButterflyUs(const Topology& t, int n, int width, const RankAt& rank_at, double whole,
                   const CostModel& c, bool halving) {
  double us = 0;
  for (double step : ButterflyStepsUs(t, n, width, rank_at, whole, c, halving)) us += step;
  return us;
}

double ButterflyUs(const Topology& t, double whole, const CostModel& c, bool halving) {
  return ButterflyUs(
      t, static_cast<int>(t.host_of.size()), 1, [](int q, int) { return q; }, whole, c, halving);
}

double EstimateUs(const Algorithm& algorithm, const CostQuery& query, const CostModel& costs) {
  if (algorithm.estimate_us == nullptr) return -1;
  if (query.size() <= 1) return 0;  // one rank sends nothing
  return algorithm.estimate_us(query, costs);
}

double EstimateUs(const Algorithm& algorithm, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs) {
  if (spec.topology == nullptr || spec.topology->host_of.size() != static_cast<size_t>(spec.size))
    return -1;
  return EstimateUs(algorithm, CostQuery{*spec.topology, spec.count, elem_size, spec.root}, costs);
}

double EstimateUs(const std::string& name, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs) {
  const Algorithm* algorithm = FindAlgorithm(spec.coll, name);
  return algorithm == nullptr ? -1 : EstimateUs(*algorithm, spec, elem_size, costs);
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

}  // namespace weft::sched
