// Bruck allgather (any world size): ceil(lg p) rounds.
//
// Work in scratch, where slot i will hold the block of rank (r + i). Slot 0 is the own
// block. In the step with distance d (1, 2, 4, ...) rank r sends its first
// min(d, size - d) slots to r - d and receives as many from r + d into slots [d, ...):
// the receiver's slot d + j is the sender's slot j, i.e. the block of
// (r + d) + j. After the last step all size slots are filled, and a final rotation (two
// copies) puts slot i into output block (r + i) mod size.
//
// Step 0 sends the own block from the input (and copies it to slot 0). A round's send
// reads slots [0, d) and its receive writes slots [d, 2d): no overlap. In place, the
// output is written only by the final rotation, after the input was last read.
#include <algorithm>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllGatherBruck(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  if (n == 1) {
    b.Copy(Out(0, c), In(0, c));
    return b.Finish();
  }
  b.NeedScratch(static_cast<size_t>(n) * c);
  auto slots = [&](int first, int num) {
    return Scratch(static_cast<size_t>(first) * c, static_cast<size_t>(num) * c);
  };
  for (int d = 1; d < n; d <<= 1) {
    b.NewRound();
    const int num = std::min(d, n - d);
    b.Send(RingPeer(r, n, -d), d == 1 ? In(0, c) : slots(0, num));
    b.Recv(RingPeer(r, n, d), slots(d, num));
    if (d == 1) b.Copy(slots(0, 1), In(0, c));
  }
  // Rotation: slots [0, n - r) -> output blocks [r, n); slots [n - r, n) -> blocks [0, r).
  b.Copy(Out(static_cast<size_t>(r) * c, static_cast<size_t>(n - r) * c), slots(0, n - r));
  b.Copy(Out(0, static_cast<size_t>(r) * c), slots(n - r, r));
  return b.Finish();
}

// Step d sends min(d, p - d) blocks to r - d.
double EstimateAllGatherBruckUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int d = 1; d < p; d <<= 1) {
    us += StepUs(q.topology, RingPartners(p, -d), q.bytes() * std::min(d, p - d), c);
  }
  return us;
}

}  // namespace weft::sched::algo
