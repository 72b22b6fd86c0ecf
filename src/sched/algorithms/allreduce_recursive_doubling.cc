// Recursive-doubling allreduce: lg p exchanges of the whole vector.
//
// With p' the largest power of two <= size and rem = size - p', the first 2*rem ranks
// fold pairwise first: each even rank among them sends its input to the odd rank above
// it and sits out; the odd rank reduces the two. The p' remaining ranks are renumbered
// 0..p'-1 ("new rank") and, for mask = 1, 2, 4, ..., exchange their whole partial
// result with new rank ^ mask and reduce what they receive. Finally each odd folded
// rank sends the result back to the even rank it absorbed.
//
// Partners reduce the same two operands (in opposite order), so with a commutative
// operator every rank ends with the same bytes. Scratch holds one incoming vector.
// In place is safe: the input is read only in the first round that reads it (sent, then
// copied once that round's messages are done), before the output (which aliases it) is
// written.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildAllReduceRecursiveDoubling(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const Slice in = In(0, spec.count);
  const Slice out = Out(0, spec.count);
  const Slice tmp = Scratch(0, spec.count);
  const int pof2 = FloorPow2(n);
  const int rem = n - pof2;
  b.NeedScratch(n > 1 ? spec.count : 0);

  // Step 1: fold the extra ranks into their odd neighbours.
  int new_rank;
  bool out_ready = false;  // out holds this rank's partial result (else it is still `in`)
  b.NewRound();
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      b.Send(r + 1, in);
      new_rank = -1;
    } else {
      b.Recv(r - 1, tmp);
      b.Copy(out, in);
      b.Reduce(out, tmp);
      new_rank = r / 2;
      out_ready = true;
    }
  } else {
    new_rank = r - rem;
  }

  // Step 2: recursive doubling among the p' remaining ranks. A rank that did not fold
  // sends its input in the first exchange and copies it to the output only once the
  // round's messages are done: a small allreduce is then one round, not a copy-only
  // round followed by the exchange (each round costs a pass of the executor's loop).
  if (new_rank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int new_partner = new_rank ^ mask;
      const int partner = new_partner < rem ? new_partner * 2 + 1 : new_partner + rem;
      b.NewRound();
      b.Send(partner, out_ready ? out : in);
      b.Recv(partner, tmp);
      if (!out_ready) b.Copy(out, in);
      out_ready = true;
      b.Reduce(out, tmp);
    }
    if (!out_ready) b.Copy(out, in);  // one rank: nothing to exchange
  }

  // Step 3: hand the result back to the folded ranks.
  if (r < 2 * rem) {
    b.NewRound();
    if (r % 2 == 0) {
      b.Recv(r + 1, out);
    } else {
      b.Send(r - 1, out);
    }
  }
  return b.Finish();
}

// The fold, lg p' exchanges of the whole vector and the unfold (cost_model.h's butterfly).
double EstimateAllReduceRecursiveDoublingUs(const CostQuery& q, const CostModel& c) {
  return ButterflyUs(q.topology, q.bytes(), c, /*halving=*/false);
}

}  // namespace weft::sched::algo
