// Pairwise (direct) reduce-scatter: size-1 rounds; in round k (1 .. size-1) rank r sends
// its input block for rank r + k straight to that rank and receives block r from rank
// r - k, reducing it into its output. No rank forwards anything, so there is no
// dependency chain: each round only waits for one peer.
//
// The output starts as the own input block. In place the output is input block r,
// which is never sent, so the blocks that are sent are still the caller's input.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildReduceScatterPairwise(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  const Slice out = Out(0, c);
  b.NewRound();
  b.Copy(out, In(static_cast<size_t>(r) * c, c));
  if (n > 1) b.NeedScratch(c);
  for (int k = 1; k < n; ++k) {
    if (k > 1) b.NewRound();
    const int to = RingPeer(r, n, k);
    b.Send(to, In(static_cast<size_t>(to) * c, c));
    b.Recv(RingPeer(r, n, -k), Scratch(0, c));
    b.Reduce(out, Scratch(0, c));
  }
  return b.Finish();
}

// Step k: every rank sends one block to r + k.
double EstimateReduceScatterPairwiseUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int k = 1; k < p; ++k) us += StepUs(q.topology, RingPartners(p, k), q.bytes(), c);
  return us;
}

}  // namespace weft::sched::algo
