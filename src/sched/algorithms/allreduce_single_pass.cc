// Single-pass allreduce on registered buffers (CollectiveSpec::registered): every rank
// reads every peer's input where it lies and writes the result straight into every
// peer's output, so each byte crosses memory once each way instead of passing through
// the shm rings' copies.
//
// The buffer is cut into `size` chunks (ChunkSize/ChunkOffset); rank r owns chunk r.
//   round 0: kSync with every peer: they have all entered the call, their inputs are
//            ready, and none still reads this rank's buffers for an earlier call.
//   round 1: output[r] = input[r] (op) peer p's input[r] for every p (the executor fuses
//            the copy with the first reduce: one pass), then output[r] is written into
//            every peer's output[r].
//   round 2: kSync with every peer: every chunk of every output is written, and nobody
//            touches this rank's buffers any more, so the call may return.
// Chunk r of every rank's input and output is touched by rank r alone between the two
// syncs, so the call is correct in place: rank r's writes to chunk r (its own output,
// then the peers') land where only rank r reads, and the reads of chunk r are done
// before rank r writes it (its own steps are in order).
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

bool SupportsRegistered(const CollectiveSpec& spec) { return spec.registered; }

Schedule BuildAllReduceSinglePass(const CollectiveSpec& spec) {
  const int n = spec.size;
  const int r = spec.rank;
  const size_t off = ChunkOffset(spec.count, n, r);
  const size_t cnt = ChunkSize(spec.count, n, r);
  return SinglePassSchedule(spec, Out(0, spec.count), In(0, spec.count), [&](Builder& b) {
    b.Copy(Out(off, cnt), In(off, cnt));
    for (int k = 1; k < n; ++k) b.PeerReduce(Out(off, cnt), RingPeer(r, n, k), In(off, cnt));
    for (int k = 1; k < n; ++k) b.PeerWrite(RingPeer(r, n, k), Out(off, cnt), Out(off, cnt));
  });
}

// Each rank reads the whole vector (its chunk of every input) and writes it (its chunk
// into every output).
double EstimateAllReduceSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2 * q.bytes());
}

}  // namespace weft::sched::algo
