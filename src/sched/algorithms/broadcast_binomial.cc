// Binomial-tree broadcast from any root (see binomial_tree.h): in round k the 2^k ranks
// that already hold the data each send it to one more rank, so lg p rounds of whole
// messages. Best for small messages. The root sends from its input and copies it into
// its output (a no-op in place); every other rank receives into its output and forwards
// from there.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/binomial_tree.h"

namespace weft::sched::algo {

Schedule BuildBroadcastBinomial(const CollectiveSpec& spec) {
  Builder b;
  AppendBinomialBroadcast(b, spec.rank, spec.size, spec.root, In(0, spec.count),
                          Out(0, spec.count));
  return b.Finish();
}

// Largest mask first, the holders send the child the whole message. Nothing at all for
// an empty message: the builder drops empty messages, and so the whole schedule.
double EstimateBroadcastBinomialUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  if (q.count == 0) return 0;
  double us = 0;
  for (int mask = CeilPow2(p) / 2; mask > 0; mask /= 2) {
    us += StepUs(q.topology, TreeLevel(p, q.root, mask, false), q.bytes(), c);
  }
  return us;
}

}  // namespace weft::sched::algo
