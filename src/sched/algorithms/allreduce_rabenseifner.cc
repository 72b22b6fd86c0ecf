// Rabenseifner allreduce: recursive-halving reduce-scatter, then recursive-doubling
// allgather. lg p rounds each way like recursive doubling, but moving halves, quarters,
// ... of the vector, so the bandwidth term is that of the ring: 2 lg p α + 2 n β.
//
// Non-power-of-two worlds fold first, as in recursive doubling: of the first 2·rem ranks
// (rem = size - p', p' the largest power of two <= size) each even rank sends its input
// to the odd rank above it and waits; the p' remaining ranks get new ranks 0..p'-1.
// The vector is cut into p' chunks (ChunkSize/ChunkOffset; some empty when count < p').
//
// Halving, mask = p'/2 .. 1: a rank holds chunks [lo, hi); it sends the half its partner
// (new rank ^ mask) keeps and receives, into scratch, the partner's partial sum of the
// half it keeps, which it reduces into its output. After lg p' steps new rank i holds the
// full reduction of chunk i.
// Doubling, mask = 1 .. p'/2: the reverse: exchange the owned ranges, which double.
// Finally odd folded ranks send the result to their even partners.
//
// Each element is reduced by exactly one rank and copied around, so all ranks end with
// the same bytes. In place is safe: the input is read only in the first round.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/halving_doubling.h"

namespace weft::sched::algo {

Schedule BuildAllReduceRabenseifner(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t count = spec.count;
  const int pof2 = FloorPow2(n);
  const int rem = n - pof2;
  if (n > 1) b.NeedScratch(count);
  auto real_rank = [&](int new_rank) { return new_rank < rem ? new_rank * 2 + 1 : new_rank + rem; };

  // Fold the extra ranks into their odd neighbours.
  int new_rank = r - rem;
  b.NewRound();
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      b.Send(r + 1, In(0, count));
      new_rank = -1;
    } else {
      b.Recv(r - 1, Scratch(0, count));
      b.Copy(Out(0, count), In(0, count));
      b.Reduce(Out(0, count), Scratch(0, count));
      new_rank = r / 2;
    }
  } else {
    b.Copy(Out(0, count), In(0, count));
  }

  if (new_rank >= 0) HalvingDoubling(b, Out(0, count), pof2, new_rank, real_rank);

  // Unfold: hand the result to the even ranks that sat out.
  if (r < 2 * rem) {
    b.NewRound();
    if (r % 2 == 0) {
      b.Recv(r + 1, Out(0, count));
    } else {
      b.Send(r - 1, Out(0, count));
    }
  }
  return b.Finish();
}

// The fold of whole vectors, then halves, quarters, ... out and back (cost_model.h's
// butterfly with halving), and the unfold.
double EstimateAllReduceRabenseifnerUs(const CostQuery& q, const CostModel& c) {
  return ButterflyUs(q.topology, q.bytes(), c, /*halving=*/true);
}

}  // namespace weft::sched::algo
