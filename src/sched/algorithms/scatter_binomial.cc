// Binomial-tree scatter from any root: the mirror of the binomial gather. With virtual
// ranks vr = rank - root (mod size) the root holds all blocks in vrank order and, for
// m = half the covering power of two down to 1, sends to vr + m the blocks of that
// child's subtree [vr + m, vr + m + min(m, size - vr - m)); every other rank receives its
// subtree's blocks from its parent vr - lowbit(vr), keeps the first and forwards the
// rest the same way. lg p rounds.
//
// Root 0 sends from its input directly (vrank order is rank order); any other root
// first rotates its input into scratch. Inner ranks receive into scratch; leaves
// receive straight into their output. Non-roots never touch their input. In place
// (root: output == input block root) the root writes its output once, with the block's
// own bytes.
#include <algorithm>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildScatterBinomial(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const size_t c = spec.count;
  const int root = spec.root;
  const int vr = VirtualRank(spec.rank, root, n);
  const int subtree = SubtreeSize(vr, n);
  auto blocks = [&](Buf buf, int first, int num) {
    return Slice{buf, static_cast<size_t>(first) * c, static_cast<size_t>(num) * c};
  };

  Buf from = Buf::kScratch;  // where this rank's subtree blocks are, in vrank order
  int mask;                  // children are vr + m for m < mask
  b.NewRound();
  if (vr == 0) {
    mask = CeilPow2(n);
    b.Copy(Out(0, c), blocks(Buf::kInput, root, 1));
    if (root == 0) {
      from = Buf::kInput;
    } else if (n > 1) {
      b.NeedScratch(static_cast<size_t>(n) * c);
      b.Copy(blocks(Buf::kScratch, 0, n - root), blocks(Buf::kInput, root, n - root));
      b.Copy(blocks(Buf::kScratch, n - root, root), blocks(Buf::kInput, 0, root));
    }
  } else {
    mask = LowBit(vr);
    const int parent = RealRank(vr - mask, root, n);
    if (subtree == 1) {
      b.Recv(parent, Out(0, c));
      return b.Finish();
    }
    b.NeedScratch(static_cast<size_t>(subtree) * c);
    b.Recv(parent, blocks(Buf::kScratch, 0, subtree));
    b.Copy(Out(0, c), blocks(Buf::kScratch, 0, 1));
  }
  // Hand each child its subtree, largest first.
  for (int m = mask >> 1; m > 0; m >>= 1) {
    if (vr + m >= n) continue;
    b.NewRound();
    b.Send(RealRank(vr + m, root, n), blocks(from, m, std::min(m, n - vr - m)));
  }
  return b.Finish();
}

// The gather's mirror: largest mask first, each child's subtree of blocks down (costed as
// the largest of the level).
double EstimateScatterBinomialUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int mask = CeilPow2(p) / 2; mask > 0; mask /= 2) {
    us += StepUs(q.topology, TreeLevel(p, q.root, mask, false),
                 q.bytes() * std::min(mask, p - mask), c);
  }
  return us;
}

}  // namespace weft::sched::algo
