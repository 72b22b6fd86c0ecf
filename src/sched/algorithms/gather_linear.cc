// Linear gather: one round; every non-root sends its block to the root, which receives
// each straight into its place in the output and copies its own block (a no-op in place,
// where the input is that block). Lowest latency for few ranks; the root's link carries
// everything.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildGatherLinear(const CollectiveSpec& spec) {
  Builder b;
  const size_t c = spec.count;
  b.NewRound();
  if (spec.rank != spec.root) {
    b.Send(spec.root, In(0, c));
    return b.Finish();
  }
  for (int p = 0; p < spec.size; ++p) {
    if (p != spec.root) b.Recv(p, Out(static_cast<size_t>(p) * c, c));
  }
  b.Copy(Out(static_cast<size_t>(spec.root) * c, c), In(0, c));
  return b.Finish();
}

// One step: every other rank's block arrives at the root at once, through its host's
// link, and the root handles size-1 receives.
double EstimateGatherLinearUs(const CostQuery& q, const CostModel& c) {
  return AllWithRootUs(q.topology, q.root, q.bytes(), /*up=*/true, c);
}

}  // namespace weft::sched::algo
