// What the single-pass algorithms on registered buffers share (allreduce_single_pass.cc
// and the files named *_single_pass.cc). Each is three rounds: a flag exchange with
// every peer, or between the root and the others (SyncPeers): they have all entered the
// call, their buffers are ready and nobody still touches this rank's buffers for an
// earlier call; the accesses to the peers' buffers; and a second flag exchange: every
// access is done, so each rank may return and its caller may touch the buffers again.
// Between the two exchanges, no two ranks touch the same elements where one of them
// writes: each algorithm's comment says why.
#pragma once

#include "sched/algorithms/builder.h"
#include "sched/cost_model.h"

namespace weft::sched::algo {

// Whom a rank exchanges flags with. kEveryPeer: every other rank. kRootAndOthers: the
// root with every other rank, the others with the root alone; for a collective in which
// only the root's buffers are touched by other ranks, or only the root touches other
// ranks' buffers (broadcast, scatter, gather), so that no two non-roots need each other's
// word. Under ranks that share cores a rank then waits for the root alone, not for every
// rank to be scheduled.
enum class SyncPeers { kEveryPeer, kRootAndOthers };

// The kSync steps of one flag exchange, in the current round.
inline void SyncWith(Builder& b, const CollectiveSpec& spec, SyncPeers peers) {
  for (int p = 0; p < spec.size; ++p) {
    if (p == spec.rank) continue;
    if (peers == SyncPeers::kRootAndOthers && spec.rank != spec.root && p != spec.root) continue;
    b.Sync(p);
  }
}

// The three rounds around `accesses(b)`, which adds the steps of the middle one. On one
// rank the collective is the copy of `solo_src` to `solo_dst` alone.
template <typename Accesses>
Schedule SinglePassSchedule(const CollectiveSpec& spec, const Slice& solo_dst,
                            const Slice& solo_src, Accesses accesses,
                            SyncPeers peers = SyncPeers::kEveryPeer) {
  Builder b;
  if (spec.size == 1) {
    b.Copy(solo_dst, solo_src);
    return b.Finish();
  }
  SyncWith(b, spec, peers);
  b.NewRound();
  accesses(b);
  b.NewRound();
  SyncWith(b, spec, peers);
  return b.Finish();
}

// The model's time: two flag exchanges (a latency each), then the busiest rank moves
// `busiest_bytes` (bytes read plus bytes written) at the host's bandwidth; the other
// ranks work in parallel with it.
inline double SinglePassUs(const CostModel& c, double busiest_bytes) {
  const double us_per_byte = 8.0 / (c.intra_gbps * 1e3);
  return 2 * c.intra_alpha_us + busiest_bytes * us_per_byte;
}

}  // namespace weft::sched::algo
