// Hierarchical allreduce, rail style: reduce inside each host over shm, one ring
// across hosts per local rank ("rail"), then gather inside each host. Needs the spec's
// topology (which host each rank is on); ranks need not be contiguous per host.
//
// Let H be the number of hosts and m the smallest number of ranks on any host. On each
// host the ranks with local index < m are *active*, local index i on rail i; a host's
// other ranks (only where hosts are uneven) are *extras*.
//
//   0. Fold (uneven hosts only): extra j sends its whole input to active rank j % m of
//      its host, which adds it in (one extra per round, through scratch).
//   1. Intra-host reduce-scatter among the m active ranks: a ring over the host's
//      actives, the buffer cut into m chunks (ChunkSize), exactly as the first half of
//      allreduce_ring. Active rank i ends holding the host's sum of chunk (i + 1) % m.
//   2. Inter-host allreduce of that chunk along rail i, among the H ranks with local
//      index i (one per host). All m rails run at once, so every active rank's link
//      carries 1/m of the data instead of one rank per host carrying all of it.
//      "hierarchical": a ring, the chunk cut into H pieces; ring reduce-scatter into
//      scratch then ring allgather: 2(H-1) inter-host latencies.
//      "hierarchical_rabenseifner": recursive halving then recursive doubling along the
//      rail, exactly allreduce_rabenseifner.cc's exchange with rail positions for ranks
//      (hosts beyond the largest power of two fold onto a neighbour first): 2 lg H
//      latencies (+2 to fold) for the same bytes, which is what a rail of hundreds of
//      hosts needs (the ring's latencies dominate a 25 MiB bucket from ~32 hosts on).
//   3. Intra-host allgather of the m reduced chunks around the host ring.
//   4. Unfold: each active rank sends the whole result to its extras.
//
// Pipelined ("hierarchical_pipelined", "hierarchical_rabenseifner_pipelined"): phases 1-3
// run on S segments of the buffer (spec.segments, from the cost model), segment k's
// rounds laid out `stagger` rounds after segment k-1's, so that segment k reduces inside
// the host while segment k-1 crosses the rails and segment k-2 is gathered. Every phase
// takes the same rounds on every rank (a rank that sits out a rail round of Rabenseifner's
// fold leaves it empty), so a message's send and receive are in the same round and the
// messages between two ranks keep one order on both sides; each segment has its own
// scratch. stagger = max(m-1, R) rounds (R: the rail's rounds), so no two segments use a
// rail in the same round.
//
// Each element is reduced by exactly one rank at each level and then copied, so every
// rank ends with the same bytes. In place: the input is read only by phase 0's send, the
// first copy of each chunk into the output and phase 1's first send, as in
// allreduce_ring; later phases touch only the output and scratch.
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/halving_doubling.h"
#include "sched/algorithms/hierarchical_allreduce.h"

namespace weft::sched::algo {

bool HasTopology(const CollectiveSpec& spec) {
  return spec.topology != nullptr &&
         spec.topology->host_of.size() == static_cast<size_t>(spec.size);
}

// Pipelining needs two phases to overlap: several ranks on every host and several hosts.
bool SupportsHierarchicalPipelined(const CollectiveSpec& spec) {
  if (!HasTopology(spec)) return false;
  const auto hosts = spec.topology->Hosts();
  if (hosts.size() < 2) return false;
  for (const auto& h : hosts) {
    if (h.size() < 2) return false;
  }
  return true;
}

int HierarchicalRailRounds(RailExchange rail, int num_hosts) {
  if (num_hosts < 2) return 0;
  if (rail == RailExchange::kRing) return 2 * (num_hosts - 1);
  const int pof2 = FloorPow2(num_hosts);
  int lg = 0;
  while ((1 << lg) < pof2) ++lg;
  return 2 * lg + (num_hosts > pof2 ? 2 : 0);
}

namespace {

// Ring allreduce of `own` among the rail's H ranks, in rounds first .. first+2(H-1)-1;
// this rank is at host position hp.
template <typename RailRank>
void RailRing(Builder& b, const Slice& own, int num_hosts, int hp, const RailRank& rail_rank,
              size_t first) {
  if (num_hosts < 2) return;
  auto piece = [&](int c) {
    const int i = RingPeer(c, num_hosts, 0);
    return Sub(own, ChunkOffset(own.count, num_hosts, i), ChunkSize(own.count, num_hosts, i));
  };
  const int rail_next = rail_rank(RingPeer(hp, num_hosts, 1));
  const int rail_prev = rail_rank(RingPeer(hp, num_hosts, -1));
  b.SetNextRound(first);
  for (int s = 0; s < num_hosts - 1; ++s) {
    b.NewRound();
    b.Send(rail_next, piece(hp - s));
    const Slice got = piece(hp - s - 1);
    const Slice tmp = Scratch(0, got.count);
    b.Recv(rail_prev, tmp);
    b.Reduce(got, tmp);
  }
  for (int s = 0; s < num_hosts - 1; ++s) {
    b.NewRound();
    b.Send(rail_next, piece(hp + 1 - s));
    b.Recv(rail_prev, piece(hp - s));
  }
}

// Rabenseifner's allreduce of `own` (already this host's partial sum, in the output)
// among the rail's H ranks, in place: the flat algorithm's fold, exchange and unfold
// with rail positions for ranks; scratch holds up to own.count elements. Rounds first ..
// first+HierarchicalRailRounds-1 on every rank: the fold's first, the unfold's last.
template <typename RailRank>
void RailHalvingDoubling(Builder& b, const Slice& own, int num_hosts, int hp,
                         const RailRank& rail_rank, size_t first) {
  if (num_hosts < 2) return;
  const int pof2 = FloorPow2(num_hosts);
  const int rem = num_hosts - pof2;
  const size_t last = first + HierarchicalRailRounds(RailExchange::kHalvingDoubling, num_hosts) - 1;
  // Rail position of new index v (folded positions 2v+1 first, then the rest).
  auto position = [&](int v) { return v < rem ? v * 2 + 1 : v + rem; };

  int v = hp - rem;  // this rank's new index; -1 while folded out
  if (hp < 2 * rem) {
    b.SetNextRound(first);
    if (hp % 2 == 0) {
      b.Send(rail_rank(hp + 1), own);
      v = -1;
    } else {
      b.Recv(rail_rank(hp - 1), Scratch(0, own.count));
      b.Reduce(own, Scratch(0, own.count));
      v = hp / 2;
    }
  }
  if (v >= 0) {
    b.SetNextRound(first + (rem > 0 ? 1 : 0));
    HalvingDoubling(b, own, pof2, v, [&](int i) { return rail_rank(position(i)); });
  }
  if (hp < 2 * rem) {
    b.SetNextRound(last);
    if (hp % 2 == 0) {
      b.Recv(rail_rank(hp + 1), own);
    } else {
      b.Send(rail_rank(hp - 1), own);
    }
  }
}

// 0. Folds the extras' inputs into the output, one per round; where this rank's
// contribution lives afterwards (the input when there are none).
Buf FoldExtras(Builder& b, const std::vector<int>& extras, size_t count) {
  Buf base = Buf::kInput;
  if (!extras.empty()) b.NeedScratch(count);
  for (int e : extras) {
    b.NewRound();
    b.Recv(e, Scratch(0, count));
    b.Copy(Out(0, count), Slice{base, 0, count});
    b.Reduce(Out(0, count), Scratch(0, count));
    base = Buf::kOutput;
  }
  return base;
}

// An active rank's place: its host's actives (the first m of every host) and its own
// local index among them.
struct Place {
  std::vector<std::vector<int>> hosts;
  int num_hosts;
  int hp;  // this host's position on the rails
  int m;   // actives per host
  int li;  // this rank's local index
};

// Phases 1-3 for one segment (the builder's window set to it), of `count` elements whose
// contribution lives in `base`, from round `first`: the host's reduce-scatter in rounds
// [first, first+p1), the rail's in the next R, the host's allgather in the m-1 after.
void Segment(Builder& b, const Place& at, Buf base, size_t count, RailExchange rail, size_t first) {
  const int m = at.m, li = at.li;
  const std::vector<int>& mine = at.hosts[at.hp];
  b.NeedScratch(ChunkSize(count, m, 0));
  auto chunk = [&](Buf buf, int c) {
    const int i = RingPeer(c, m, 0);
    return Slice{buf, ChunkOffset(count, m, i), ChunkSize(count, m, i)};
  };
  const int next = mine[RingPeer(li, m, 1)];
  const int prev = mine[RingPeer(li, m, -1)];

  // 1. Reduce-scatter around the host's actives (alone: the copy to the output).
  b.SetNextRound(first);
  if (m == 1) {
    b.NewRound();
    b.Copy(Out(0, count), Slice{base, 0, count});
  }
  for (int s = 0; s < m - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(s == 0 ? base : Buf::kOutput, li - s));
    const Slice got = chunk(Buf::kOutput, li - s - 1);
    const Slice tmp = Scratch(0, got.count);
    b.Recv(prev, tmp);
    b.Copy(got, chunk(base, li - s - 1));
    b.Reduce(got, tmp);
  }
  const size_t rail_first = first + std::max(m - 1, 1);

  // 2. Allreduce of the owned chunk along rail li, one rank per host.
  const Slice own = chunk(Buf::kOutput, li + 1);
  const auto rail_rank = [&](int host_position) { return at.hosts[host_position][li]; };
  if (rail == RailExchange::kRing) {
    RailRing(b, own, at.num_hosts, at.hp, rail_rank, rail_first);
  } else {
    RailHalvingDoubling(b, own, at.num_hosts, at.hp, rail_rank, rail_first);
  }

  // 3. Allgather of the reduced chunks around the host's actives.
  b.SetNextRound(rail_first + HierarchicalRailRounds(rail, at.num_hosts));
  for (int s = 0; s < m - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(Buf::kOutput, li + 1 - s));
    b.Recv(prev, chunk(Buf::kOutput, li - s));
  }
}

// The schedule in `segments` segments (1: not pipelined).
Schedule BuildHierarchical(const CollectiveSpec& spec, RailExchange rail, int segments) {
  Builder b;
  const size_t count = spec.count;
  const int r = spec.rank;
  // Without a topology (HasTopology false; only a caller that skips supports() gets
  // here) every rank counts as its own host, which makes this a flat ring.
  const Topology topology = TopologyOrFlat(spec);
  Place at{topology.Hosts(), 0, topology.host_of[r], 0, 0};
  at.num_hosts = static_cast<int>(at.hosts.size());
  const std::vector<int>& mine = at.hosts[at.hp];
  at.m = static_cast<int>(mine.size());
  for (const auto& h : at.hosts) at.m = std::min(at.m, static_cast<int>(h.size()));
  while (mine[at.li] != r) ++at.li;
  const int m = at.m, li = at.li;

  // 0 and 4 for an extra: hand the input to the active rank, get the result back.
  if (li >= m) {
    const int helper = mine[li % m];
    b.NewRound();
    b.Send(helper, In(0, count));
    b.NewRound();
    b.Recv(helper, Out(0, count));
    return b.Finish();
  }
  std::vector<int> extras;
  for (int j = li + m; j < static_cast<int>(mine.size()); j += m) extras.push_back(mine[j]);

  // Where this rank's contribution lives: the input, or the output once extras are in.
  const Buf base = FoldExtras(b, extras, count);

  // 1-3, segment by segment, segment k from round first + k * stagger.
  const size_t p1 = std::max(m - 1, 1);
  const size_t rail_rounds = HierarchicalRailRounds(rail, at.num_hosts);
  const size_t stagger = std::max<size_t>({p1, rail_rounds, 1});
  const size_t first = b.NextRound();
  const int s_count = LaySegments(
      b, count, segments, first, stagger,
      [&](size_t len, size_t from) { Segment(b, at, base, len, rail, from); },
      [m](size_t len) { return ChunkSize(len, m, 0); });

  // 4. The result to the extras folded in at phase 0.
  b.SetNextRound(first + (s_count - 1) * stagger + p1 + rail_rounds + (m - 1));
  b.NewRound();
  for (int e : extras) b.Send(e, Out(0, count));
  return b.Finish();
}

}  // namespace

Schedule BuildAllReduceHierarchical(const CollectiveSpec& spec) {
  return BuildHierarchical(spec, RailExchange::kRing, 1);
}

Schedule BuildAllReduceHierarchicalRabenseifner(const CollectiveSpec& spec) {
  return BuildHierarchical(spec, RailExchange::kHalvingDoubling, 1);
}

Schedule BuildAllReduceHierarchicalPipelined(const CollectiveSpec& spec) {
  return BuildHierarchical(spec, RailExchange::kRing, spec.segments);
}

Schedule BuildAllReduceHierarchicalRabenseifnerPipelined(const CollectiveSpec& spec) {
  return BuildHierarchical(spec, RailExchange::kHalvingDoubling, spec.segments);
}

}  // namespace weft::sched::algo
