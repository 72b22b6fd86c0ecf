// Recursive-doubling allgather (power-of-two world sizes only). Before the step with
// distance m (1, 2, 4, ...) rank r holds the m contiguous blocks starting at r & ~(m-1);
// it exchanges them with r ^ m, whose blocks are the adjacent m, so after lg p steps every
// rank has all blocks, in place in the output. Step 0 sends the rank's block from the
// input and copies it into the output.
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllGatherRecursiveDoubling(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  b.NewRound();
  b.Copy(Out(static_cast<size_t>(r) * c, c), In(0, c));
  for (int m = 1; m < n; m <<= 1) {
    if (m > 1) b.NewRound();
    const int partner = r ^ m;
    const size_t mine = static_cast<size_t>(r & ~(m - 1)) * c;
    const size_t theirs = static_cast<size_t>(partner & ~(m - 1)) * c;
    b.Send(partner, m == 1 ? In(0, c) : Out(mine, m * c));
    b.Recv(partner, Out(theirs, m * c));
  }
  return b.Finish();
}

// Step d exchanges the d blocks gathered so far with r ^ d (clipped to p - d blocks, and
// no partner beyond the world, for a caller that asks outside the power-of-two worlds it
// supports).
double EstimateAllGatherRecursiveDoublingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int d = 1; d < p; d <<= 1) {
    std::vector<int> partner(p, -1);
    for (int r = 0; r < p; ++r) partner[r] = (r ^ d) < p ? r ^ d : -1;
    us += StepUs(q.topology, partner, q.bytes() * std::min(d, p - d), c);
  }
  return us;
}

}  // namespace weft::sched::algo
