// The exchange at the heart of Rabenseifner's allreduce, shared by the flat algorithm
// (allreduce_rabenseifner.cc, over the whole world) and the hierarchical one's rails
// (allreduce_hierarchical.cc, over one rank per host). The callers fold the ranks beyond
// a power of two in and out around it; only the pof2 remaining take part.
#pragma once

#include <functional>

#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

// This rank, at index v (0 <= v < pof2, a power of two) among the participants, reduces
// `whole` (its partial sum, in place) with theirs: recursive halving (mask = pof2/2 .. 1:
// keep the half of its range on its side of the mask, send the other half to participant
// v ^ mask, receive that participant's partial sum of the kept half into scratch and
// reduce it in), which leaves participant i with the full sum of chunk i of pof2
// (ChunkSize/ChunkOffset of whole.count); then recursive doubling retraces the masks,
// exchanging the owned ranges until every participant holds all of `whole`.
// `rank_of(i)` is the rank of participant i. Scratch must hold the first kept half (at
// most whole.count elements).
void HalvingDoubling(Builder& b, const Slice& whole, int pof2, int v,
                     const std::function<int(int)>& rank_of);

}  // namespace weft::sched::algo
