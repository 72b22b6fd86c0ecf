// Ring allgather: size-1 steps; at step s rank r forwards block (r - s) to r+1 and
// receives block (r - s - 1) from r-1, straight into the output. At step 0 the rank's
// own block is sent from the input and copied into its place in the output; in place the
// input already is that block and the copy vanishes at run time. A round's send and
// receive touch different blocks.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllGatherRing(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  auto block = [&](int i) { return Out(static_cast<size_t>(RingPeer(i, n, 0)) * c, c); };
  b.NewRound();
  b.Copy(block(r), In(0, c));
  for (int s = 0; s < n - 1; ++s) {
    if (s > 0) b.NewRound();
    b.Send(RingPeer(r, n, 1), s == 0 ? In(0, c) : block(r - s));
    b.Recv(RingPeer(r, n, -1), block(r - s - 1));
  }
  return b.Finish();
}

// size-1 steps in which every rank sends one block to the next.
double EstimateAllGatherRingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  return (p - 1) * StepUs(q.topology, RingPartners(p, 1), q.bytes(), c);
}

}  // namespace weft::sched::algo
