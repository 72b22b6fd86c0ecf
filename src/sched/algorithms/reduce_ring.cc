// Ring reduce: a ring reduce-scatter (as in ring allreduce) leaves rank r with the full
// reduction of chunk (r + 1); then every non-root sends its chunk straight to the root.
// Bandwidth-optimal for large vectors: each rank sends about 2 count (size-1)/size
// elements in total, and the root receives count (size-1)/size of them in the last round.
//
// The root accumulates in its output. Non-roots may not touch their output, so they
// accumulate in scratch[0, count) and receive partial chunks into scratch[count, ...);
// the root receives partial chunks into scratch[0, ...).
//
// In place (root: input == output): input chunk c is read only when copied to output
// chunk c just before that chunk is first reduced, or sent at step 0 (chunk r, which
// the root receives whole at the end), so no input is read after it is overwritten.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildReduceRing(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t count = spec.count;
  const bool is_root = r == spec.root;
  if (n == 1) {
    b.Copy(Out(0, count), In(0, count));
    return b.Finish();
  }
  const Buf acc_buf = is_root ? Buf::kOutput : Buf::kScratch;
  const size_t tmp_base = is_root ? 0 : count;
  b.NeedScratch(tmp_base + ChunkSize(count, n, 0));
  auto chunk = [&](Buf buf, int c) {
    const int i = RingPeer(c, n, 0);
    return Slice{buf, ChunkOffset(count, n, i), ChunkSize(count, n, i)};
  };
  const int next = RingPeer(r, n, 1);
  const int prev = RingPeer(r, n, -1);

  // Reduce-scatter: at step s send chunk (r - s), receive and reduce chunk (r - s - 1).
  for (int s = 0; s < n - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(s == 0 ? Buf::kInput : acc_buf, r - s));
    const Slice got = chunk(acc_buf, r - s - 1);
    const Slice tmp = Scratch(tmp_base, got.count);
    b.Recv(prev, tmp);
    b.Copy(got, chunk(Buf::kInput, r - s - 1));
    b.Reduce(got, tmp);
  }

  // Gather: rank p owns chunk (p + 1); all of them go straight to the root's output.
  b.NewRound();
  if (is_root) {
    for (int p = 0; p < n; ++p) {
      if (p != r) b.Recv(p, chunk(Buf::kOutput, p + 1));
    }
  } else {
    b.Send(spec.root, chunk(acc_buf, r + 1));
  }
  return b.Finish();
}

// The ring reduce-scatter's size-1 steps of a chunk (count/size), then every chunk
// straight to the root in one step, which the root's host link and its handling of
// size-1 messages pay for.
double EstimateReduceRingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  const double chunk = q.bytes() / p;
  return (p - 1) * StepUs(q.topology, RingPartners(p, 1), chunk, c) +
         AllWithRootUs(q.topology, q.root, chunk, /*up=*/true, c);
}

}  // namespace weft::sched::algo
