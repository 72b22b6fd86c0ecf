// Hierarchical reduce-scatter, rail style, for hosts with equal numbers of ranks (L
// each, H hosts; placement need not be contiguous). Output block q (count elements)
// goes to rank q. Rail i is the set of ranks with local index i, one per host; its
// "block set" is their H blocks.
//
//   1. Intra-host ring reduce-scatter of block sets: at step s (0 .. L-2) local rank i
//      sends its partial sums of the set of rail (i - s - 1) to local rank i+1 (at s = 0
//      straight from its input) and receives those of rail (i - s - 2) from local rank
//      i-1, adding its own input blocks. Afterwards local rank i holds its host's sums
//      of rail i's H blocks: L-1 steps of H messages over shm.
//   2. Inter-host ring reduce-scatter along rail i (H-1 steps of one block, all L rails
//      at once): as reducescatter_ring over the rail's ranks, each adding its host's
//      partial sums. The block received at the last step is this rank's own, complete.
//
// Only 1/L of the data (H-1 blocks per rank) leaves a host, against the flat ring's
// p-1 blocks per step chain in which every step crosses a host boundary somewhere.
// On uneven hosts it does not apply (the registry's HasUniformTopology); built anyway it
// treats every rank as its own host, which is the flat ring.
//
// Pipelined ("hierarchical_pipelined"): every block cut into spec.segments segments, both
// phases laid out per segment (the builder's window moves the slices to the segment's
// elements of every block, and to its own scratch), segment k's rounds max(L-1, H-1)
// rounds after segment k-1's, so that segment k goes round the host while segment k-1
// crosses the rails.
//
// Partial sums live in scratch: two slots of H blocks alternate in phase 1 (the one being
// sent is never the one received into), two slots of one block in phase 2. The input is
// never written; in place (output == input block r) the output is written only by the
// final copy, after the last read of input block r.
#include <algorithm>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/rail_view.h"

namespace weft::sched::algo {

namespace {

// Scratch one segment of `len` elements per block needs.
size_t SegmentScratch(const RailView& rails, size_t len) {
  const size_t set = static_cast<size_t>(rails.num_hosts) * len;
  return (rails.local > 1 ? 2 * set : 0) + (rails.num_hosts > 1 ? 2 * len : 0);
}

// Phases 1 and 2 for blocks of `len` elements every `stride` (the whole call, or one
// segment of it under the builder's window), from round `first`: the host's ring in
// rounds [first, first + L-1), the rail's in the max(H-1, 1) after.
void RailRingsReduceScatter(Builder& b, const RailView& rails, size_t stride, size_t len,
                            size_t first) {
  const int num_hosts = rails.num_hosts, hp = rails.hp, local = rails.local, li = rails.li;
  auto at = [&rails](int h, int i) { return rails.At(h, i); };
  auto in_block = [&](int rank) { return In(static_cast<size_t>(rank) * stride, len); };
  const size_t set = static_cast<size_t>(num_hosts) * len;  // elements of one block set

  // Where this rank's host partial of the block of host position h (its own rail) lives
  // once phase 1 is done: scratch slot (L-2) % 2, or the input when alone on the host.
  auto host_partial = [&](int h) {
    const int hh = RingPeer(h, num_hosts, 0);
    if (local == 1) return in_block(at(hh, li));
    return Scratch(static_cast<size_t>((local - 2) % 2) * set + static_cast<size_t>(hh) * len, len);
  };

  // 1. Ring reduce-scatter of block sets inside the host.
  b.NeedScratch(SegmentScratch(rails, len));
  auto slot = [&](int s, int h) {
    return Scratch(static_cast<size_t>(s % 2) * set + static_cast<size_t>(h) * len, len);
  };
  const int next = at(hp, li + 1);
  const int prev = at(hp, li - 1);
  b.SetNextRound(first);
  for (int s = 0; s < local - 1; ++s) {
    b.NewRound();
    for (int h = 0; h < num_hosts; ++h) {
      b.Send(next, s == 0 ? in_block(at(h, li - 1)) : slot(s - 1, h));
      b.Recv(prev, slot(s, h));
      // slot = (left neighbour's partial) (op) (own input block).
      b.Reduce(slot(s, h), in_block(at(h, li - s - 2)));
    }
  }

  // 2. Ring reduce-scatter along the rail, through two one-block slots after the sets.
  b.SetNextRound(first + (local - 1));
  if (num_hosts == 1) {
    b.NewRound();
    b.Copy(Out(0, len), host_partial(hp));
    return;
  }
  const size_t base = local > 1 ? 2 * set : 0;
  auto rail_slot = [&](int s) { return Scratch(base + static_cast<size_t>(s % 2) * len, len); };
  const int rail_next = at(hp + 1, li);
  const int rail_prev = at(hp - 1, li);
  for (int s = 0; s < num_hosts - 1; ++s) {
    b.NewRound();
    b.Send(rail_next, s == 0 ? host_partial(hp - 1) : rail_slot(s - 1));
    b.Recv(rail_prev, rail_slot(s));
    b.Reduce(rail_slot(s), host_partial(hp - s - 2));
  }
  b.Copy(Out(0, len), rail_slot(num_hosts - 2));
}

}  // namespace

Schedule BuildReduceScatterHierarchical(const CollectiveSpec& spec) {
  Builder b;
  RailRingsReduceScatter(b, RailView::Of(spec), spec.count, spec.count, 0);
  return b.Finish();
}

Schedule BuildReduceScatterHierarchicalPipelined(const CollectiveSpec& spec) {
  Builder b;
  const RailView rails = RailView::Of(spec);
  const size_t stagger = std::max({rails.local - 1, rails.num_hosts - 1, 1});
  LaySegments(
      b, spec.count, spec.segments, 0, stagger,
      [&](size_t len, size_t from) { RailRingsReduceScatter(b, rails, spec.count, len, from); },
      [&](size_t len) { return SegmentScratch(rails, len); });
  return b.Finish();
}

// The L-1 steps of block sets inside the host and the H-1 rail steps of one block: the
// hierarchical allgather's steps in mirror order, at the same cost (rail_view.h).
double EstimateReduceScatterHierarchicalUs(const CostQuery& q, const CostModel& c) {
  return RailRingsUs(q.topology, q.bytes(), c);
}

int SegmentsReduceScatterHierarchicalPipelined(const CostQuery& q, const CostModel& c) {
  return CheapestRailRingsSegments(q, c, /*rails_first=*/false);
}

double EstimateReduceScatterHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c) {
  return RailRingsPipelinedUs(q.topology, q.bytes(), c,
                              SegmentsReduceScatterHierarchicalPipelined(q, c),
                              /*rails_first=*/false);
}

}  // namespace weft::sched::algo
