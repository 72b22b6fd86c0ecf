// Hierarchical allgather, rail style, for hosts with equal numbers of ranks (L each, H
// hosts; placement need not be contiguous). The output is the p blocks in rank order.
//
//   1. Inter-host ring allgather along rail i: local rank i of every host forwards the
//      blocks of rail i (the ranks with local index i), H-1 steps of one block, all L
//      rails at once. Afterwards local rank i holds its rail's H blocks.
//   2. Intra-host ring allgather of rail sets: at step s local rank i forwards the H
//      blocks of rail (i - s) to local rank i+1 and receives those of rail (i - s - 1),
//      L-1 steps of H messages over shm.
//
// Each block goes to its place in the output directly; nothing is reduced. In place the
// input is this rank's block of the output, sent at step 0 as in allgather_ring.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/rail_view.h"

namespace weft::sched::algo {

bool HasUniformTopology(const CollectiveSpec& spec) {
  if (!HasTopology(spec)) return false;
  const auto hosts = spec.topology->Hosts();
  for (const auto& h : hosts) {
    if (h.size() != hosts[0].size()) return false;
  }
  return true;
}

Schedule BuildAllGatherHierarchical(const CollectiveSpec& spec) {
  Builder b;
  const int r = spec.rank;
  const size_t c = spec.count;
  const RailView rails = RailView::Of(spec);
  const int num_hosts = rails.num_hosts, hp = rails.hp, local = rails.local, li = rails.li;
  auto at = [&rails](int h, int i) { return rails.At(h, i); };
  auto block = [&](int rank) { return Out(static_cast<size_t>(rank) * c, c); };

  b.NewRound();
  b.Copy(block(r), In(0, c));
  // 1. Rail ring across hosts.
  const int rail_next = at(hp + 1, li);
  const int rail_prev = at(hp - 1, li);
  for (int s = 0; s < num_hosts - 1; ++s) {
    if (s > 0) b.NewRound();
    b.Send(rail_next, s == 0 ? In(0, c) : block(at(hp - s, li)));
    b.Recv(rail_prev, block(at(hp - s - 1, li)));
  }
  // 2. Ring of rail sets inside the host.
  const int next = at(hp, li + 1);
  const int prev = at(hp, li - 1);
  for (int s = 0; s < local - 1; ++s) {
    b.NewRound();
    for (int h = 0; h < num_hosts; ++h) {
      b.Send(next, block(at(h, li - s)));
      b.Recv(prev, block(at(h, li - s - 1)));
    }
  }
  return b.Finish();
}

}  // namespace weft::sched::algo
