// Scatter + allgather broadcast (van de Geijn): the root's buffer is cut into `size`
// chunks (ChunkSize/ChunkOffset), chunk j belonging to virtual rank j = rank - root
// (mod size). A binomial scatter hands each rank its chunk, then a ring allgather over
// the virtual ranks gives everyone every chunk: (lg p + p - 1) α + 2 (p-1)/p n β, so
// no rank sends the whole message lg p times as in the binomial tree.
//
// A subtree [vr, vr + k) of the binomial tree is the contiguous element range of
// chunks vr .. vr+k-1, so ranks receive straight into their output and forward from it:
// no scratch. The root sends from its input and copies it to its output (a no-op in
// place). A round's receive and send never touch the same chunk.
#include <algorithm>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildBroadcastScatterAllGather(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int root = spec.root;
  const size_t count = spec.count;
  const int vr = VirtualRank(spec.rank, root, n);
  // Elements of chunks [first, first + num) in buffer `buf`.
  auto chunks = [&](Buf buf, int first, int num) {
    const size_t begin = ChunkOffset(count, n, first);
    return Slice{buf, begin, ChunkOffset(count, n, first + num) - begin};
  };
  auto chunk = [&](int v) { return chunks(Buf::kOutput, RingPeer(v, n, 0), 1); };

  // 1. Binomial scatter of the chunks.
  int mask;
  const Buf from = vr == 0 ? Buf::kInput : Buf::kOutput;
  b.NewRound();
  if (vr == 0) {
    mask = CeilPow2(n);
    b.Copy(Out(0, count), In(0, count));
  } else {
    mask = LowBit(vr);
    b.Recv(RealRank(vr - mask, root, n), chunks(Buf::kOutput, vr, std::min(mask, n - vr)));
  }
  for (int m = mask >> 1; m > 0; m >>= 1) {
    if (vr + m >= n) continue;
    b.NewRound();
    b.Send(RealRank(vr + m, root, n), chunks(from, vr + m, std::min(m, n - vr - m)));
  }

  // 2. Ring allgather over virtual ranks: at step s forward chunk vr - s, receive
  // chunk vr - s - 1.
  for (int s = 0; s < n - 1; ++s) {
    b.NewRound();
    b.Send(RealRank(RingPeer(vr, n, 1), root, n), chunk(vr - s));
    b.Recv(RealRank(RingPeer(vr, n, -1), root, n), chunk(vr - s - 1));
  }
  return b.Finish();
}

// The binomial tree's levels, largest mask first, each parent sending the chunks of its
// child's subtree (the largest subtree of the level sets its time), then the ring
// allgather's size-1 steps of a chunk. An empty message costs nothing (no messages).
double EstimateBroadcastScatterAllGatherUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  if (q.count == 0) return 0;
  const double bytes = q.bytes();
  double us = 0;
  for (int mask = CeilPow2(p) / 2; mask > 0; mask /= 2) {
    const int subtree = std::min(mask, p - mask);
    us += StepUs(q.topology, TreeLevel(p, q.root, mask, false), bytes * subtree / p, c);
  }
  return us + (p - 1) * StepUs(q.topology, RingPartners(p, 1), bytes / p, c);
}

}  // namespace weft::sched::algo
