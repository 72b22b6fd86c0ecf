// Single-pass gather on registered buffers (single_pass.h): every rank writes its input
// straight into its block of the root's output, all in parallel; the root copies its
// own.
//
// Block r of the root's output is written by rank r alone, and nobody reads a peer's
// buffers. In place, the root's input is its own block of its output, which only the
// root touches, and its copy onto itself moves nothing.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildGatherSinglePass(const CollectiveSpec& spec) {
  const size_t c = spec.count;
  const Slice block = Out(static_cast<size_t>(spec.rank) * c, c);
  return SinglePassSchedule(spec, block, In(0, c), [&](Builder& b) {
    if (spec.rank == spec.root) {
      b.Copy(block, In(0, c));
    } else {
      b.PeerWrite(spec.root, block, In(0, c));
    }
  }, SyncPeers::kRootAndOthers);
}

// Each rank reads its block and writes it once.
double EstimateGatherSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2 * q.bytes());
}

}  // namespace weft::sched::algo
