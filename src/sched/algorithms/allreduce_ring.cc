// Ring allreduce: a ring reduce-scatter followed by a ring allgather.
//
// The buffer is cut into `size` chunks (ChunkSize/ChunkOffset, so any count works; some
// chunks are empty when count < size). Rank r sends to r+1 and receives from r-1.
//
// Reduce-scatter, steps s = 0 .. size-2: rank r sends chunk (r - s) — its own input at
// s = 0, afterwards the partial sum it built in the previous step — and receives the
// left neighbour's partial sum of chunk (r - s - 1) into scratch, then folds its own
// input chunk in: output[c] = input[c]; output[c] (op)= scratch. After size-1 steps rank r
// holds the complete reduction of chunk (r + 1).
//
// Allgather, steps s = 0 .. size-2: rank r forwards chunk (r + 1 - s) and receives chunk
// (r - s), straight into the output. Every chunk is reduced by exactly one rank and then
// copied around, so all ranks end with the same bytes.
//
// In place: input chunk c is read only when it is first copied to output chunk c (or
// sent at step 0, for chunk r, which is never reduced locally), so overwriting it
// afterwards is safe.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllReduceRing(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t count = spec.count;
  auto chunk = [&](Buf buf, int c) {
    const int i = RingPeer(c, n, 0);
    return Slice{buf, ChunkOffset(count, n, i), ChunkSize(count, n, i)};
  };
  if (n == 1) {
    b.Copy(Out(0, count), In(0, count));
    return b.Finish();
  }
  const int next = RingPeer(r, n, 1);
  const int prev = RingPeer(r, n, -1);
  b.NeedScratch(ChunkSize(count, n, 0));  // chunk 0 is the largest

  // Reduce-scatter.
  for (int s = 0; s < n - 1; ++s) {
    b.NewRound();
    const int send_c = r - s;
    const int recv_c = r - s - 1;
    b.Send(next, chunk(s == 0 ? Buf::kInput : Buf::kOutput, send_c));
    const Slice got = chunk(Buf::kOutput, recv_c);
    const Slice tmp = Scratch(0, got.count);
    b.Recv(prev, tmp);
    b.Copy(got, chunk(Buf::kInput, recv_c));
    b.Reduce(got, tmp);
  }
  // Allgather of the reduced chunks.
  for (int s = 0; s < n - 1; ++s) {
    b.NewRound();
    b.Send(next, chunk(Buf::kOutput, r + 1 - s));
    b.Recv(prev, chunk(Buf::kOutput, r - s));
  }
  return b.Finish();
}

// The model's steps: 2(size-1), in each of which every rank sends one chunk (count/size)
// to the next, the reduce-scatter's and the allgather's alike.
double EstimateAllReduceRingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  return 2 * (p - 1) * StepUs(q.topology, RingPartners(p, 1), q.bytes() / p, c);
}

}  // namespace weft::sched::algo
