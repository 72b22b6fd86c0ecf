// Linear scatter: one round; the root sends every other rank its block from the input
// and copies its own block to its output (a no-op in place, where the output is that
// block); every other rank receives its block into its output.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildScatterLinear(const CollectiveSpec& spec) {
  Builder b;
  const size_t c = spec.count;
  b.NewRound();
  if (spec.rank != spec.root) {
    b.Recv(spec.root, Out(0, c));
    return b.Finish();
  }
  for (int p = 0; p < spec.size; ++p) {
    if (p != spec.root) b.Send(p, In(static_cast<size_t>(p) * c, c));
  }
  b.Copy(Out(0, c), In(static_cast<size_t>(spec.root) * c, c));
  return b.Finish();
}

// One step: the root sends every other rank its block at once, through its host's link.
double EstimateScatterLinearUs(const CostQuery& q, const CostModel& c) {
  return AllWithRootUs(q.topology, q.root, q.bytes(), /*up=*/false, c);
}

}  // namespace weft::sched::algo
