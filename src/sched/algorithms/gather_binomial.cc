// Binomial-tree gather to any root: lg p rounds. With virtual ranks vr = rank - root
// (mod size), vr's subtree is the vranks [vr, vr + lowbit(vr)) clipped to the world (the
// root's is everything). Leaves first: at level m (1, 2, 4, ...) a vr with bit m set
// sends all blocks of its subtree, in vrank order, to vr - m and stops; the others
// receive the subtree of vr + m next to what they have.
//
// Blocks collect in vrank order in an accumulation area: scratch for non-roots (their
// output may not be touched), the output itself for root 0 (vrank order is rank order),
// and scratch for any other root, which rotates it into the output at the end with two
// copies. Leaves send their input directly. In place (root: input == output block
// root) the root's output is written only by receives into other blocks (root 0) or by
// the final rotation (other roots), which writes the root's block with the same bytes.
#include <algorithm>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildGatherBinomial(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const size_t c = spec.count;
  const int root = spec.root;
  const int vr = VirtualRank(spec.rank, root, n);
  const int subtree = SubtreeSize(vr, n);
  auto blocks = [&](Buf buf, int first, int num) {
    return Slice{buf, static_cast<size_t>(first) * c, static_cast<size_t>(num) * c};
  };
  if (subtree == 1) {  // a leaf (or a world of one)
    b.NewRound();
    if (vr == 0) {
      b.Copy(Out(0, c), In(0, c));
    } else {
      b.Send(RealRank(vr - LowBit(vr), root, n), In(0, c));
    }
    return b.Finish();
  }
  const Buf acc = (vr == 0 && root == 0) ? Buf::kOutput : Buf::kScratch;
  if (acc == Buf::kScratch) b.NeedScratch(static_cast<size_t>(subtree) * c);

  // Receive the children's subtrees: child vr + m brings min(m, n - vr - m) blocks.
  for (int m = 1; m < subtree; m <<= 1) {
    b.NewRound();
    b.Recv(RealRank(vr + m, root, n), blocks(acc, m, std::min(m, n - vr - m)));
    if (m == 1) b.Copy(blocks(acc, 0, 1), In(0, c));
  }
  if (vr != 0) {
    b.NewRound();
    b.Send(RealRank(vr - LowBit(vr), root, n), blocks(acc, 0, subtree));
  } else if (root != 0) {
    // vrank j is rank (root + j): blocks [0, n - root) -> output blocks [root, n), the
    // rest -> [0, root).
    b.Copy(blocks(Buf::kOutput, root, n - root), blocks(acc, 0, n - root));
    b.Copy(blocks(Buf::kOutput, 0, root), blocks(acc, n - root, root));
  }
  return b.Finish();
}

// Leaves first: at mask m the child sends its subtree's blocks (up to m; a clipped
// subtree sends fewer, costed as the largest of the level).
double EstimateGatherBinomialUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int mask = 1; mask < p; mask <<= 1) {
    us += StepUs(q.topology, TreeLevel(p, q.root, mask, true), q.bytes() * std::min(mask, p - mask),
                 c);
  }
  return us;
}

}  // namespace weft::sched::algo
