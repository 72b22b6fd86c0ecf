// Ring reduce-scatter: size-1 steps. Rank r sends to r+1 and receives from r-1. At step
// s it sends its partial sum of block (r - s - 1) — at s = 0 simply its input block — and
// receives the left neighbour's partial sum of block (r - s - 2), to which it adds its own
// input block. The block received at the last step is block r, now complete.
//
// Partial sums live in two scratch slots used alternately (the one being sent is never
// the one being received into): slot s % 2 receives at step s and is sent at step s+1.
// The input is never written. In place (output == input block r), input block r is read
// by the last reduction, before the final copy writes the output.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildReduceScatterRing(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  auto in_block = [&](int i) { return In(static_cast<size_t>(RingPeer(i, n, 0)) * c, c); };
  if (n == 1) {
    b.Copy(Out(0, c), In(0, c));
    return b.Finish();
  }
  b.NeedScratch(2 * c);
  auto slot = [&](int s) { return Scratch(static_cast<size_t>(s % 2) * c, c); };
  for (int s = 0; s < n - 1; ++s) {
    b.NewRound();
    b.Send(RingPeer(r, n, 1), s == 0 ? in_block(r - 1) : slot(s - 1));
    b.Recv(RingPeer(r, n, -1), slot(s));
    // slot = (left neighbour's partial) (op) (own input block).
    b.Reduce(slot(s), in_block(r - s - 2));
  }
  b.Copy(Out(0, c), slot(n - 2));
  return b.Finish();
}

// size-1 steps in which every rank sends one block (its partial sum) to the next. Added
// step by step, as the pairwise estimate is, so that the two tie exactly where each step
// of both costs the same (one rank per host) and the planner keeps its size thresholds'
// choice.
double EstimateReduceScatterRingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  const double step = StepUs(q.topology, RingPartners(p, 1), q.bytes(), c);
  double us = 0;
  for (int k = 1; k < p; ++k) us += step;
  return us;
}

}  // namespace weft::sched::algo
