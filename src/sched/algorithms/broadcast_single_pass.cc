// Single-pass broadcast on registered buffers (single_pass.h): every rank but the root
// reads the root's input straight into its own output, all in parallel; the root copies
// its input into its output.
//
// The root's input is the only buffer read by another rank, and nobody writes it: the
// root's copy writes its output, which in place is the input itself, and a copy onto
// itself moves nothing.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildBroadcastSinglePass(const CollectiveSpec& spec) {
  const size_t c = spec.count;
  return SinglePassSchedule(spec, Out(0, c), In(0, c), [&](Builder& b) {
    if (spec.rank == spec.root) {
      b.Copy(Out(0, c), In(0, c));
    } else {
      b.PeerRead(Out(0, c), spec.root, In(0, c));
    }
  }, SyncPeers::kRootAndOthers);
}

// Each rank reads the vector once and writes it once.
double EstimateBroadcastSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2 * q.bytes());
}

}  // namespace weft::sched::algo
