// Binomial-tree reduce to any root (see binomial_tree.h): lg p rounds; at each level
// half of the remaining ranks send their partial sums to a partner and drop out.
//
// Non-roots may not touch their output buffer (NCCL lets them pass none), so a non-root
// with children accumulates in scratch[0, count) and receives into scratch[count, 2 count);
// the root accumulates straight into its output and receives into scratch[0, count).
// Leaves send their input and need no scratch.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildReduceBinomial(const CollectiveSpec& spec) {
  Builder b;
  const size_t count = spec.count;
  const bool is_root = spec.rank == spec.root;
  const int vr = VirtualRank(spec.rank, spec.root, spec.size);
  const bool has_children = (vr % 2 == 0) && vr + 1 < spec.size;
  Slice acc = Out(0, count);
  Slice tmp = Scratch(0, count);
  if (!is_root) {
    acc = Scratch(0, count);
    tmp = Scratch(count, count);
  }
  if (has_children) b.NeedScratch(tmp.offset + count);
  AppendBinomialReduce(b, spec.rank, spec.size, spec.root, In(0, count), acc, tmp);
  return b.Finish();
}

// Leaves first: at mask 1, 2, 4, ... the child vr + mask sends its partial sum up, the
// whole vector each time.
double EstimateReduceBinomialUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int mask = 1; mask < p; mask <<= 1) {
    us += StepUs(q.topology, TreeLevel(p, q.root, mask, true), q.bytes(), c);
  }
  return us;
}

}  // namespace weft::sched::algo
