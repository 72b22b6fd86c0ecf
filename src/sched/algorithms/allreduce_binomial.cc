// Binomial-tree allreduce: a binomial reduce to rank 0 followed by a binomial broadcast
// from rank 0 (both in binomial_tree.h). 2 lg p rounds, each moving the whole vector:
// good for small messages on any world size. Ranks with children accumulate in the
// output buffer, leaves send their input directly; rank 0 alone computes the result
// and everyone receives its bytes. In place is safe: a rank reads its input only before
// (or while) it first writes its output.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildAllReduceBinomial(const CollectiveSpec& spec) {
  Builder b;
  const Slice in = In(0, spec.count);
  const Slice out = Out(0, spec.count);
  if (spec.size > 1) b.NeedScratch(spec.count);
  AppendBinomialReduce(b, spec.rank, spec.size, /*root=*/0, in, out, Scratch(0, spec.count));
  AppendBinomialBroadcast(b, spec.rank, spec.size, /*root=*/0, out, out);
  return b.Finish();
}

// Reduce then broadcast: each level of the tree (children vr + mask of rank 0's tree)
// carries the whole vector once up and once down.
double EstimateAllReduceBinomialUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int d = 1; d < p; d <<= 1)
    us += 2 * StepUs(q.topology, TreeLevel(p, 0, d, true), q.bytes(), c);
  return us;
}

}  // namespace weft::sched::algo
