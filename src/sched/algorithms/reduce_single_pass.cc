// Single-pass reduce on registered buffers (single_pass.h): as the single-pass allreduce,
// rank r reduces chunk r of every rank's input where the inputs lie, but writes the
// result into the root's output only. The root reduces its chunk straight into its
// output; the other ranks, whose output may be absent, reduce into scratch and then
// write the root's chunk.
//
// Chunk r of the root's output is written by rank r alone. In place, the root's output
// is its input: rank r reads chunk r of it and then writes chunk r, in that order, and
// no other rank touches chunk r of any buffer.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

Schedule BuildReduceSinglePass(const CollectiveSpec& spec) {
  const int n = spec.size;
  const int r = spec.rank;
  const size_t off = ChunkOffset(spec.count, n, r);
  const size_t cnt = ChunkSize(spec.count, n, r);
  const Slice mine = In(off, cnt);
  const bool root = r == spec.root;
  const Slice acc = root ? Out(off, cnt) : Scratch(0, cnt);
  return SinglePassSchedule(spec, Out(0, spec.count), In(0, spec.count), [&](Builder& b) {
    if (!root) b.NeedScratch(cnt);
    // The executor fuses the copy with the first reduce: one pass.
    b.Copy(acc, mine);
    for (int k = 1; k < n; ++k) b.PeerReduce(acc, RingPeer(r, n, k), mine);
    if (!root) b.PeerWrite(spec.root, Out(off, cnt), acc);
  });
}

// Each rank reads its chunk of every input (the whole vector), writes the chunk to
// scratch and then into the root's output.
double EstimateReduceSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, q.bytes() * (1.0 + 2.0 / q.size()));
}

}  // namespace weft::sched::algo
