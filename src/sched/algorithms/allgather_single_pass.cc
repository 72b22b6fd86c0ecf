// Single-pass allgather on registered buffers (single_pass.h): rank r writes its input
// into block r of every rank's output, its own included.
//
// Block r of every output is written by rank r alone, and nobody reads a peer's
// buffers. In place, rank r's input is block r of its own output: only rank r touches
// it, and its copy onto itself moves nothing.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildAllGatherSinglePass(const CollectiveSpec& spec) {
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  const Slice block = Out(static_cast<size_t>(r) * c, c);
  return SinglePassSchedule(spec, block, In(0, c), [&](Builder& b) {
    b.Copy(block, In(0, c));
    for (int k = 1; k < n; ++k) b.PeerWrite(RingPeer(r, n, k), block, In(0, c));
  });
}

// Each rank reads its input and writes it once per rank.
double EstimateAllGatherSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2.0 * q.size() * q.bytes());
}

}  // namespace weft::sched::algo
