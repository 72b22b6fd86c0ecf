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
//   2. Inter-host allreduce of that chunk along rail i: a ring of the H ranks with local
//      index i (one per host), the chunk cut into H pieces; ring reduce-scatter into
//      scratch then ring allgather. All m rails run at once, so every active rank's
//      link carries 1/m of the data instead of one rank per host carrying all of it.
//   3. Intra-host allgather of the m reduced chunks around the host ring.
//   4. Unfold: each active rank sends the whole result to its extras.
//
// Each element is reduced by exactly one rank at each level and then copied, so every
// rank ends with the same bytes. In place: the input is read only by phase 0's send, the
// first copy of each chunk into the output and phase 1's first send, as in
// allreduce_ring; later phases touch only the output and scratch.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

bool HasTopology(const CollectiveSpec& spec) {
  return spec.topology != nullptr &&
         spec.topology->host_of.size() == static_cast<size_t>(spec.size);
}

Schedule BuildAllReduceHierarchical(const CollectiveSpec& spec) {
  Builder b;
  const size_t count = spec.count;
  const int r = spec.rank;
  // Without a topology (HasTopology false; only a caller that skips supports() gets
  // here) every rank counts as its own host, which makes this a flat ring.
  const Topology topology = TopologyOrFlat(spec);
  const std::vector<std::vector<int>> hosts = topology.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int hp = topology.host_of[r];  // this host's position on the rails
  const std::vector<int>& mine = hosts[hp];
  int m = static_cast<int>(mine.size());
  for (const auto& h : hosts) m = std::min(m, static_cast<int>(h.size()));
  int li = 0;
  while (mine[li] != r) ++li;

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
  Buf base = Buf::kInput;
  b.NeedScratch(ChunkSize(count, m, 0));
  // 0. Fold the extras in, one per round.
  if (!extras.empty()) b.NeedScratch(count);
  for (int e : extras) {
    b.NewRound();
    b.Recv(e, Scratch(0, count));
    b.Copy(Out(0, count), Slice{base, 0, count});
    b.Reduce(Out(0, count), Scratch(0, count));
    base = Buf::kOutput;
  }

  // 1. Reduce-scatter around the host's actives.
  auto chunk = [&](Buf buf, int c) {
    const int i = RingPeer(c, m, 0);
    return Slice{buf, ChunkOffset(count, m, i), ChunkSize(count, m, i)};
  };
  const int next = mine[RingPeer(li, m, 1)];
  const int prev = mine[RingPeer(li, m, -1)];
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

  // 2. Ring allreduce of the owned chunk along rail li, one rank per host.
  const Slice own = chunk(Buf::kOutput, li + 1);
  auto piece = [&](int c) {
    const int i = RingPeer(c, num_hosts, 0);
    return Sub(own, ChunkOffset(own.count, num_hosts, i), ChunkSize(own.count, num_hosts, i));
  };
  if (num_hosts > 1) {
    const int rail_next = hosts[RingPeer(hp, num_hosts, 1)][li];
    const int rail_prev = hosts[RingPeer(hp, num_hosts, -1)][li];
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

  // 3. Allgather of the reduced chunks around the host's actives.
  for (int s = 0; s < m - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(Buf::kOutput, li + 1 - s));
    b.Recv(prev, chunk(Buf::kOutput, li - s));
  }

  // 4. The result to the extras folded in at phase 0.
  b.NewRound();
  for (int e : extras) b.Send(e, Out(0, count));
  return b.Finish();
}

}  // namespace weft::sched::algo
