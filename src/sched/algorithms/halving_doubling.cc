#include "sched/algorithms/halving_doubling.h"

namespace weft::sched::algo {

void HalvingDoubling(Builder& b, const Slice& whole, int pof2, int v,
                     const std::function<int(int)>& rank_of) {
  // Elements of chunks [lo, hi) of pof2.
  auto chunks = [&](int lo, int hi) {
    const size_t begin = ChunkOffset(whole.count, pof2, lo);
    return Sub(whole, begin, ChunkOffset(whole.count, pof2, hi) - begin);
  };
  int lo = 0, hi = pof2;
  for (int mask = pof2 / 2; mask > 0; mask /= 2) {
    const int partner = rank_of(v ^ mask);
    const int mid = (lo + hi) / 2;
    const bool upper = (v & mask) != 0;
    const Slice keep = upper ? chunks(mid, hi) : chunks(lo, mid);
    b.NewRound();
    b.Send(partner, upper ? chunks(lo, mid) : chunks(mid, hi));
    b.Recv(partner, Scratch(0, keep.count));
    b.Reduce(keep, Scratch(0, keep.count));
    (upper ? lo : hi) = mid;
  }
  // Own range [v with its low bits cleared, + mask) grows to the partner's side.
  for (int mask = 1; mask < pof2; mask *= 2) {
    const int partner = v ^ mask;
    const int mine = v & ~(mask - 1);
    const int theirs = partner & ~(mask - 1);
    b.NewRound();
    b.Send(rank_of(partner), chunks(mine, mine + mask));
    b.Recv(rank_of(partner), chunks(theirs, theirs + mask));
  }
}

}  // namespace weft::sched::algo
