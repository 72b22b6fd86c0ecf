// Hierarchical broadcast, rail style: scatter inside the root's host over shm, one
// broadcast across hosts per local rank ("rail"), then an allgather inside every host.
// Needs the spec's topology; ranks need not be contiguous per host, the root may be any
// rank.
//
// Let H be the number of hosts and m the smallest number of ranks on any host. Each
// host has m *active* ranks (its first m; on the root's host the root takes the place
// of local index lr % m if its own local index lr is >= m), active index i on rail i;
// the others (only where hosts are uneven) are *extras*. The buffer is cut into m
// chunks (ChunkSize), chunk i carried by rail i.
//
//   1. Scatter in the root's host: the root sends chunk i to its host's active i, all at
//      once (over shm), and copies its input to its output.
//   2. Along rail i, active i of the root's host broadcasts chunk i to active i of every
//      other host, hosts in order from the root's. A chunk of at least kSegmentElems
//      elements goes down a pipelined chain cut into segments (as broadcast_ring: every
//      host link busy once the pipe is full, so about chunk·β per rail); a smaller one
//      cannot be pipelined and goes down a binomial tree over the hosts (ceil(lg H)
//      hops instead of H-1). All m rails run at once: every active rank's link carries
//      1/m of the message.
//   3. Allgather of the m chunks around the host's actives (ring, m-1 steps over shm).
//   4. Each active sends the whole buffer to its extras (extra k of a host to active
//      k % m).
//
// Every rank receives into its output and forwards from it; the root sends from its
// input only in phase 1 (in place the input is the output, so nothing changes).
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {
namespace {

// Segment granularity of the inter-host chain, as in broadcast_ring.
constexpr size_t kSegmentElems = 16384;

// Each host's active ranks (m of them, in rail order) and extras.
struct HostRoles {
  std::vector<int> active;
  std::vector<int> extras;
};

std::vector<HostRoles> Roles(const std::vector<std::vector<int>>& hosts, int m, int root) {
  std::vector<HostRoles> roles(hosts.size());
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::vector<int>& ranks = hosts[h];
    std::vector<int> active(ranks.begin(), ranks.begin() + m);
    const auto at = std::find(ranks.begin(), ranks.end(), root);
    if (at != ranks.end() && at - ranks.begin() >= m) active[(at - ranks.begin()) % m] = root;
    std::vector<int> extras;
    for (int r : ranks) {
      if (std::find(active.begin(), active.end(), r) == active.end()) extras.push_back(r);
    }
    roles[h] = {std::move(active), std::move(extras)};
  }
  return roles;
}

// Segments of the inter-host chain for a chunk of `chunk` elements on `num_hosts` hosts;
// 1 means a binomial tree over the hosts instead (phase 2 above).
size_t HierarchicalBroadcastSegments(size_t chunk, int num_hosts) {
  if (chunk < kSegmentElems) return 1;
  const size_t by_size = (chunk + kSegmentElems - 1) / kSegmentElems;
  return std::min(chunk, std::max(static_cast<size_t>(num_hosts), by_size));
}

// Phase 2 for position `q` of `num_hosts` on one rail: `own` from the root's host to
// every other, by a binomial tree (small chunks) or a pipelined chain.
template <typename RailRank>
void BroadcastAlongRail(Builder& b, const Slice& own, int q, int num_hosts, RailRank rail_rank) {
  const size_t segs = HierarchicalBroadcastSegments(own.count, num_hosts);
  if (num_hosts > 1 && own.count > 0 && segs == 1) {
    // Binomial tree over positions: receive from q minus its lowest bit, then send to
    // q + mask for the masks below it, farthest first.
    int mask = CeilPow2(num_hosts);
    if (q > 0) {
      mask = LowBit(q);
      b.NewRound();
      b.Recv(rail_rank(q - mask), own);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (q + mask < num_hosts) {
        b.NewRound();
        b.Send(rail_rank(q + mask), own);
      }
    }
  } else if (num_hosts > 1 && own.count > 0) {
    // Pipelined chain: in round t position q receives segment t - q + 1 and forwards
    // segment t - q.
    const int n = static_cast<int>(segs);
    auto seg = [&](long long j) {
      const int i = static_cast<int>(j);
      return Sub(own, ChunkOffset(own.count, n, i), ChunkSize(own.count, n, i));
    };
    for (long long t = 0; t < static_cast<long long>(n) + num_hosts - 2; ++t) {
      const long long recv_j = t - q + 1;
      const long long send_j = t - q;
      b.NewRound();
      if (q > 0 && recv_j >= 0 && recv_j < n) b.Recv(rail_rank(q - 1), seg(recv_j));
      if (q < num_hosts - 1 && send_j >= 0 && send_j < n) b.Send(rail_rank(q + 1), seg(send_j));
    }
  }
}

}  // namespace

Schedule BuildBroadcastHierarchical(const CollectiveSpec& spec) {
  Builder b;
  const size_t count = spec.count;
  const int r = spec.rank;
  // Without a topology every rank counts as its own host: a flat chain or tree.
  const Topology topology = TopologyOrFlat(spec);
  const std::vector<std::vector<int>> hosts = topology.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  int m = spec.size;
  for (const auto& h : hosts) m = std::min(m, static_cast<int>(h.size()));
  const std::vector<HostRoles> roles = Roles(hosts, m, spec.root);
  const int hp = topology.host_of[r];
  const int root_host = topology.host_of[spec.root];
  const HostRoles& mine = roles[hp];

  auto chunk = [&](int c) {
    const int i = RingPeer(c, m, 0);
    return Out(ChunkOffset(count, m, i), ChunkSize(count, m, i));
  };

  // An extra only waits for the whole result (phase 4).
  const auto extra_at = std::find(mine.extras.begin(), mine.extras.end(), r);
  if (extra_at != mine.extras.end()) {
    b.NewRound();
    b.Recv(mine.active[(extra_at - mine.extras.begin()) % m], Out(0, count));
    return b.Finish();
  }
  const int li =
      static_cast<int>(std::find(mine.active.begin(), mine.active.end(), r) - mine.active.begin());

  // 1. Scatter inside the root's host.
  b.NewRound();
  if (r == spec.root) {
    b.Copy(Out(0, count), In(0, count));
    for (int i = 0; i < m; ++i) {
      if (i != li) b.Send(mine.active[i], In(chunk(i).offset, chunk(i).count));
    }
  } else if (hp == root_host) {
    b.Recv(spec.root, chunk(li));
  }

  // 2. Chunk li along rail li, hosts numbered by position q from the root's host.
  const Slice own = chunk(li);
  const int q = RingPeer(hp, num_hosts, -root_host);
  auto rail_rank = [&](int pos) { return roles[RingPeer(pos, num_hosts, root_host)].active[li]; };
  BroadcastAlongRail(b, own, q, num_hosts, rail_rank);

  // 3. Ring allgather of the chunks around the host's actives.
  const int next = mine.active[RingPeer(li, m, 1)];
  const int prev = mine.active[RingPeer(li, m, -1)];
  for (int s = 0; s < m - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(li - s));
    b.Recv(prev, chunk(li - s - 1));
  }

  // 4. The whole buffer to this rank's extras.
  b.NewRound();
  for (size_t k = li; k < mine.extras.size(); k += m) b.Send(mine.extras[k], Out(0, count));
  return b.Finish();
}

// The four phases, with the actives taken as each host's first m ranks (where the root
// sits among them changes which ranks send, not between which hosts). An empty message
// costs nothing (no messages).
double EstimateBroadcastHierarchicalUs(const CostQuery& q, const CostModel& c) {
  const Topology& t = q.topology;
  const int p = q.size();
  if (q.count == 0) return 0;
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int root_host = t.host_of[q.root];
  int m = p;
  bool uneven = false;
  for (const auto& h : hosts) {
    m = std::min(m, static_cast<int>(h.size()));
    uneven = uneven || h.size() != hosts[0].size();
  }
  const size_t chunk = (q.count + m - 1) / m;
  const double chunk_bytes = double(chunk) * double(q.elem_size);
  double us = 0;
  // 1. Scatter: the root writes m-1 chunks over shm, one after the other.
  if (m > 1) us += c.intra_alpha_us + (m - 1) * chunk_bytes / (c.intra_gbps * 125.0);
  // 2. Every rail at once: a binomial tree over host positions (each level one step in
  //    which every sending host's m rails leave it together), or the pipelined chain.
  auto tree_level = [&](int mask) {
    std::vector<int> partner(p, -1);
    for (int pos = 0; pos + mask < num_hosts; pos += 2 * mask) {
      for (int i = 0; i < m; ++i) {
        partner[hosts[(pos + root_host) % num_hosts][i]] =
            hosts[(pos + mask + root_host) % num_hosts][i];
      }
    }
    return StepUs(t, partner, chunk_bytes, c);
  };
  const size_t segs = HierarchicalBroadcastSegments(chunk, num_hosts);
  if (num_hosts > 1 && segs == 1) {
    for (int mask = CeilPow2(num_hosts) / 2; mask > 0; mask /= 2) us += tree_level(mask);
  } else if (num_hosts > 1) {
    // The chain over host positions; hop pos carries all m rails' segments out of host
    // pos at once, so they share its link.
    std::vector<std::vector<int>> hops;
    for (int pos = 0; pos + 1 < num_hosts; ++pos) {
      hops.emplace_back(p, -1);
      for (int i = 0; i < m; ++i) {
        hops.back()[hosts[(pos + root_host) % num_hosts][i]] =
            hosts[(pos + 1 + root_host) % num_hosts][i];
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
  // 4. The whole message to the extras, over shm.
  if (uneven) us += c.intra_alpha_us + q.bytes() / (c.intra_gbps * 125.0);
  return us;
}

// How much cheaper in the model the hierarchical broadcast must be than every other
// broadcast before it is chosen, where hosts have one network link (inter_links=1, the
// default). There it puts the same bytes on each host's link as the ring's chain, so the
// model credits it only with a shorter pipeline fill and fewer latencies; what the model
// does not see is its scatter and allgather over shm competing for the cores that drive
// the network. On 4 namespace hosts x 2 ranks at 0.5 Gbit/s the ring was 2-5% faster from
// 256K to 4M (docs/BENCHMARKS.md); twice that is the margin. With several links per host
// the rails run side by side, a gain the model does see, so it needs none there.
Margin BroadcastHierarchicalMargin(const CostModel& c) {
  if (c.inter_links <= 1) return {0.10, "one link per host"};
  return {};
}

}  // namespace weft::sched::algo
