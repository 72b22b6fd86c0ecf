#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

void AppendBinomialReduce(Builder& b, int rank, int size, int root, const Slice& input,
                          const Slice& acc, const Slice& tmp) {
  const int vr = VirtualRank(rank, root, size);
  bool acc_ready = false;
  for (int mask = 1; mask < size; mask <<= 1) {
    b.NewRound();
    if (vr & mask) {
      // All children have reported: pass the partial sum up and stop.
      b.Send(RealRank(vr - mask, root, size), acc_ready ? acc : input);
      return;
    }
    if (vr + mask < size) {
      // Child vr + mask owns the subtree [vr + mask, vr + 2 mask); fold its sum in.
      b.Recv(RealRank(vr + mask, root, size), tmp);
      if (!acc_ready) b.Copy(acc, input);
      acc_ready = true;
      b.Reduce(acc, tmp);
    }
  }
  // Only the root gets here; with no children at all it still needs its own input.
  if (!acc_ready) {
    b.NewRound();
    b.Copy(acc, input);
  }
}

void AppendBinomialBroadcast(Builder& b, int rank, int size, int root, const Slice& src,
                             const Slice& dst) {
  const int vr = VirtualRank(rank, root, size);
  // Receive from the parent (vr minus its lowest set bit). The root has no parent; its
  // first child is half the smallest power of two covering the world.
  int mask = 1;
  if (vr == 0) {
    mask = CeilPow2(size);
    b.NewRound();
    b.Copy(dst, src);
  } else {
    mask = LowBit(vr);
    b.NewRound();
    b.Recv(RealRank(vr - mask, root, size), dst);
  }
  const Slice& from = vr == 0 ? src : dst;
  // Forward to children vr + m for m = mask/2, mask/4, ..., 1, one per round.
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < size) {
      b.NewRound();
      b.Send(RealRank(vr + mask, root, size), from);
    }
  }
}

}  // namespace weft::sched::algo
