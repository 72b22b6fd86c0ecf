// Single-pass scatter on registered buffers (single_pass.h): every rank reads its block
// of the root's input straight into its output, all in parallel; the root copies its
// own.
//
// Nobody writes a peer's buffers, and block r of the root's input is read by rank r
// alone. In place, the root's output is its own block of its input, which no other rank
// reads, and its copy onto itself moves nothing.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildScatterSinglePass(const CollectiveSpec& spec) {
  const size_t c = spec.count;
  const Slice block = In(static_cast<size_t>(spec.rank) * c, c);
  return SinglePassSchedule(spec, Out(0, c), block, [&](Builder& b) {
    if (spec.rank == spec.root) {
      b.Copy(Out(0, c), block);
    } else {
      b.PeerRead(Out(0, c), spec.root, block);
    }
  }, SyncPeers::kRootAndOthers);
}

// Each rank reads its block and writes it once.
double EstimateScatterSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2 * q.bytes());
}

}  // namespace weft::sched::algo
