// Dissemination barrier: ceil(lg p) rounds; in round k rank r sends an empty message to
// r + 2^k and waits for one from r - 2^k. After round k every rank has (transitively)
// heard from the 2^(k+1) - 1 ranks before it, so after the last round from everyone:
// no rank leaves before all have arrived. Works for any world size.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildBarrierDissemination(const CollectiveSpec& spec) {
  Builder b;
  for (int d = 1; d < spec.size; d <<= 1) {
    b.NewRound();
    b.SendToken(RingPeer(spec.rank, spec.size, d));
    b.RecvToken(RingPeer(spec.rank, spec.size, -d));
  }
  return b.Finish();
}

double EstimateBarrierDisseminationUs(const CostQuery& q, const CostModel& c) {
  double us = 0;
  for (int d = 1; d < q.size(); d <<= 1) us += StepUs(q.topology, RingPartners(q.size(), d), 0, c);
  return us;
}

}  // namespace weft::sched::algo
