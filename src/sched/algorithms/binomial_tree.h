// Binomial-tree phases shared by the tree algorithms (reduce, broadcast, and allreduce
// as reduce + broadcast). Ranks are renumbered relative to the root ("virtual rank"
// vr = (rank - root) mod size) so that the root is vr 0; a vr's parent is vr with its
// lowest set bit cleared and its children are vr + m for powers of two m below that
// bit. The phases only append rounds to a Builder.
#pragma once

#include <algorithm>
#include <cstddef>

#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

inline int VirtualRank(int rank, int root, int size) { return RingPeer(rank, size, -root); }
// How many vranks the subtree rooted at vrank `vr` holds: [vr, vr + lowbit(vr)) clipped
// to the world; the root's subtree is the whole world.
inline int SubtreeSize(int vr, int size) {
  return vr == 0 ? size : std::min(LowBit(vr), size - vr);
}
inline int RealRank(int vrank, int root, int size) { return RingPeer(vrank, size, root); }

// Reduces `input` (count elements, every rank) into `acc` at `root`, leaves first: at
// level m (1, 2, 4, ...) a vr with bit m set sends its partial sum to vr - m and
// stops; the others receive from vr + m into `tmp` and reduce it into `acc`. A rank
// with no children sends straight from `input` and never touches `acc`; the others copy
// `input` into `acc` on their first receive (for the root of a one-rank world, at once).
void AppendBinomialReduce(Builder& b, int rank, int size, int root, const Slice& input,
                          const Slice& acc, const Slice& tmp);

// Broadcasts from `root`: the root sends `src` (and copies it into `dst`), every other
// rank receives into `dst` from its parent, then forwards `dst` to its children,
// farthest subtree first so the largest subtree starts earliest.
void AppendBinomialBroadcast(Builder& b, int rank, int size, int root, const Slice& src,
                             const Slice& dst);

}  // namespace weft::sched::algo
