// Pairwise all-to-all: size-1 rounds; in round k (1 .. size-1) rank r sends its block
// for r + k to that rank and receives the block of r - k from it, straight into the
// output. Each round pairs every rank with one sender and one receiver, so links are
// evenly loaded: best for large blocks. The own block is a local copy.
//
// Not in-place safe: in place, round k would overwrite output block r - k, which is the
// input block still to be sent in round size - k. The executor copies the input aside.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllToAllPairwise(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  auto block = [&](int i) { return static_cast<size_t>(i) * c; };
  b.NewRound();
  b.Copy(Out(block(r), c), In(block(r), c));
  for (int k = 1; k < n; ++k) {
    if (k > 1) b.NewRound();
    const int to = RingPeer(r, n, k);
    const int from = RingPeer(r, n, -k);
    b.Send(to, In(block(to), c));
    b.Recv(from, Out(block(from), c));
  }
  return b.Finish(/*inplace_safe=*/false);
}

// Step k: every rank sends its block for r + k.
double EstimateAllToAllPairwiseUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int k = 1; k < p; ++k) us += StepUs(q.topology, RingPartners(p, k), q.bytes(), c);
  return us;
}

}  // namespace weft::sched::algo
