// Recursive-halving reduce-scatter (power-of-two world sizes only): lg p rounds instead
// of p-1, with the same (p-1)/p · n bandwidth term as the ring.
//
// A rank is responsible for a range of blocks [lo, hi), at first all of them. For
// mask = p/2 .. 1 it splits the range in halves, sends the half its partner r ^ mask
// keeps (its partial sums of those blocks) and receives the partner's partial sums of
// the half it keeps, adding its own. After lg p rounds the range is block r alone.
//
// Partial sums live in scratch, in two areas of p/2 blocks used alternately (the one
// being sent from is never the one received into); an area holds the current range
// from its first block on. The first round sends and adds straight from the input, the
// last result is copied to the output. The input is never written, and in place
// (output == input block r) the output is written only at the very end.
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Schedule BuildReduceScatterRecursiveHalving(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  if (n == 1) {
    b.Copy(Out(0, c), In(0, c));
    return b.Finish();
  }
  const size_t area = static_cast<size_t>(n / 2) * c;
  b.NeedScratch(2 * area);
  // Blocks [first, first + num) of a range that starts at block `lo`, in area `a`
  // (a < 0: the input, indexed by absolute block).
  auto blocks = [&](int a, int lo, int first, int num) {
    if (a < 0) return In(static_cast<size_t>(first) * c, static_cast<size_t>(num) * c);
    return Scratch(a * area + static_cast<size_t>(first - lo) * c, static_cast<size_t>(num) * c);
  };

  int lo = 0, hi = n;
  int cur = -1;  // where this rank's partial sums of [lo, hi) are: the input at first
  for (int mask = n / 2; mask > 0; mask /= 2) {
    const int partner = r ^ mask;
    const int mid = (lo + hi) / 2;
    const bool upper = (r & mask) != 0;
    const int keep_lo = upper ? mid : lo;
    const int give_lo = upper ? lo : mid;
    const int half = mid - lo;
    const int next = cur == 0 ? 1 : 0;
    b.NewRound();
    b.Send(partner, blocks(cur, lo, give_lo, half));
    // The partner's partials of the kept half arrive in the other area, at its start;
    // add our own partials of the same blocks.
    b.Recv(partner, blocks(next, keep_lo, keep_lo, half));
    b.Reduce(blocks(next, keep_lo, keep_lo, half), blocks(cur, lo, keep_lo, half));
    lo = keep_lo;
    hi = keep_lo + half;
    cur = next;
  }
  b.Copy(Out(0, c), blocks(cur, lo, r, 1));
  return b.Finish();
}

// Step mask (p/2 .. 1) sends mask blocks to r ^ mask. Not costed (< 0) outside the
// power-of-two worlds it supports.
double EstimateReduceScatterRecursiveHalvingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  if ((p & (p - 1)) != 0) return -1;
  double us = 0;
  for (int mask = p / 2; mask > 0; mask /= 2) {
    std::vector<int> partner(p);
    for (int r = 0; r < p; ++r) partner[r] = r ^ mask;
    us += StepUs(q.topology, partner, mask * q.bytes(), c);
  }
  return us;
}

}  // namespace weft::sched::algo
