// Single-pass reduce-scatter on registered buffers (single_pass.h): rank r reduces block r
// of every rank's input, where the inputs lie, straight into its own output.
//
// Nobody writes a peer's buffers. Rank r writes only its own output, which in place is
// block r of its own input, and no peer reads that block (peer p reads block p).
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildReduceScatterSinglePass(const CollectiveSpec& spec) {
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  const Slice mine = In(static_cast<size_t>(r) * c, c);
  return SinglePassSchedule(spec, Out(0, c), mine, [&](Builder& b) {
    // The executor fuses the copy with the first reduce: one pass.
    b.Copy(Out(0, c), mine);
    for (int k = 1; k < n; ++k) b.PeerReduce(Out(0, c), RingPeer(r, n, k), mine);
  });
}

// Each rank reads its block of every input and writes its output once.
double EstimateReduceScatterSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, (q.size() + 1) * q.bytes());
}

}  // namespace weft::sched::algo
