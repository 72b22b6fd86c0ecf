// Hierarchical allgather, rail style, for hosts with equal numbers of ranks (L each, H
// hosts; placement need not be contiguous). The output is the p blocks in rank order.
//
//   1. Inter-host allgather along rail i (local rank i of every host), all L rails at once,
//      after which local rank i holds its rail's H blocks:
//        hierarchical:           a ring, H-1 steps of one block;
//        hierarchical_doubling:  recursive doubling, lg H steps; at the step of `mask` a
//          host exchanges the blocks of its group of `mask` hosts with the partner group
//          at host ^ mask. The blocks are strided in the output (one per host of the
//          rail), so a step sends each as its own message, straight from and into its
//          place: H-1 messages as with the ring, but lg H network latencies instead of
//          H-1. Hosts beyond the largest power of two fold in first (host pof2 + j sends
//          its block to host j, which carries it in its group) and get every block from
//          host j at the end.
//   2. Intra-host ring allgather of rail sets: at step s local rank i forwards the H
//      blocks of rail (i - s) to local rank i+1 and receives those of rail (i - s - 1),
//      L-1 steps of H messages over shm.
//
// Pipelined ("hierarchical_pipelined"): every block cut into spec.segments segments, the
// ring rails and the ring of rail sets laid out per segment (the builder's window moves
// the slices to the segment's elements of every block), segment k's rounds max(H-1, L-1)
// rounds after segment k-1's, so that segment k crosses the rails while segment k-1 goes
// round the host.
//
// Each block goes to its place in the output directly; nothing is reduced. In place the
// input is this rank's block of the output, sent from the input before it is copied.
#include <algorithm>
#include <functional>
#include <vector>

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

namespace {

// Step 2: the ring of rail sets inside the host; blocks of `len` elements every `stride`.
void RailSetRing(Builder& b, const RailView& rails, size_t stride, size_t len) {
  auto block = [&](int rank) { return Out(static_cast<size_t>(rank) * stride, len); };
  const int li = rails.li, hp = rails.hp;
  const int next = rails.At(hp, li + 1);
  const int prev = rails.At(hp, li - 1);
  for (int s = 0; s < rails.local - 1; ++s) {
    b.NewRound();
    for (int h = 0; h < rails.num_hosts; ++h) {
      b.Send(next, block(rails.At(h, li - s)));
      b.Recv(prev, block(rails.At(h, li - s - 1)));
    }
  }
}

}  // namespace

namespace {

// Steps 1 and 2 for blocks of `len` elements every `stride` (the whole call, or one
// segment of it under the builder's window), from round `first`: the rail ring in rounds
// [first, first + max(H-1, 1)), the ring of rail sets in the L-1 after.
void RailRingsAllGather(Builder& b, const RailView& rails, int r, size_t stride, size_t len,
                        size_t first) {
  const int num_hosts = rails.num_hosts, hp = rails.hp, li = rails.li;
  auto block = [&](int rank) { return Out(static_cast<size_t>(rank) * stride, len); };
  b.SetNextRound(first);
  b.NewRound();
  b.Copy(block(r), In(0, len));
  // 1. Rail ring across hosts.
  const int rail_next = rails.At(hp + 1, li);
  const int rail_prev = rails.At(hp - 1, li);
  for (int s = 0; s < num_hosts - 1; ++s) {
    if (s > 0) b.NewRound();
    b.Send(rail_next, s == 0 ? In(0, len) : block(rails.At(hp - s, li)));
    b.Recv(rail_prev, block(rails.At(hp - s - 1, li)));
  }
  b.SetNextRound(first + std::max(num_hosts - 1, 1));
  RailSetRing(b, rails, stride, len);
}

}  // namespace

Schedule BuildAllGatherHierarchical(const CollectiveSpec& spec) {
  Builder b;
  RailRingsAllGather(b, RailView::Of(spec), spec.rank, spec.count, spec.count, 0);
  return b.Finish();
}

Schedule BuildAllGatherHierarchicalPipelined(const CollectiveSpec& spec) {
  Builder b;
  const RailView rails = RailView::Of(spec);
  const size_t stagger = std::max({rails.num_hosts - 1, rails.local - 1, 1});
  LaySegments(
      b, spec.count, spec.segments, 0, stagger,
      [&](size_t len, size_t from) {
        RailRingsAllGather(b, rails, spec.rank, spec.count, len, from);
      },
      [](size_t) { return size_t{0}; });
  return b.Finish();
}

Schedule BuildAllGatherHierarchicalDoubling(const CollectiveSpec& spec) {
  Builder b;
  const int r = spec.rank;
  const size_t c = spec.count;
  const RailView rails = RailView::Of(spec);
  const int num_hosts = rails.num_hosts, hp = rails.hp, li = rails.li;
  // The block of the rank on this rail at host position h; this rank's own comes from
  // the input (in place it is the same memory), so no step waits for the copy.
  auto rail_block = [&](int h) {
    return h == hp ? In(0, c) : Out(static_cast<size_t>(rails.At(h, li)) * c, c);
  };
  auto on_rail = [&](int h) { return rails.At(h, li); };
  const int pof2 = FloorPow2(num_hosts);
  const int rem = num_hosts - pof2;

  b.NewRound();
  if (hp >= pof2) {
    // Folded: my block to host hp - pof2, which brings back every other block.
    const int carrier = on_rail(hp - pof2);
    b.Send(carrier, rail_block(hp));
    b.NewRound();
    for (int h = 0; h < num_hosts; ++h) {
      if (h != hp) b.Recv(carrier, rail_block(h));
    }
  } else {
    const bool carries = hp < rem;
    if (carries) b.Recv(on_rail(hp + pof2), rail_block(hp + pof2));
    // The hosts of the group of `mask` hosts starting at `first` with their folded
    // hosts, in an order both ends of a step agree on.
    auto group = [&](int first, int mask) {
      std::vector<int> hosts;
      for (int h = first; h < first + mask; ++h) {
        hosts.push_back(h);
        if (h < rem) hosts.push_back(h + pof2);
      }
      return hosts;
    };
    for (int mask = 1; mask < pof2; mask <<= 1) {
      b.NewRound();
      const int partner = hp ^ mask;
      const int peer = on_rail(partner);
      const std::vector<int> out = group(hp & ~(mask - 1), mask);
      const std::vector<int> in = group(partner & ~(mask - 1), mask);
      // Sends and receives alternate, so each end posts the receive of the peer's first
      // block right after its own first send (the simulator posts in step order).
      for (size_t k = 0; k < std::max(out.size(), in.size()); ++k) {
        if (k < out.size()) b.Send(peer, rail_block(out[k]));
        if (k < in.size()) b.Recv(peer, rail_block(in[k]));
      }
    }
    if (carries) {
      b.NewRound();
      for (int h = 0; h < num_hosts; ++h) {
        if (h != hp + pof2) b.Send(on_rail(hp + pof2), rail_block(h));
      }
    }
  }
  // The own block into the output, after every step that sends it from the input.
  b.Copy(Out(static_cast<size_t>(r) * c, c), In(0, c));
  RailSetRing(b, rails, c, c);
  return b.Finish();
}

// H-1 rail steps of one block and the L-1 steps of rail sets (rail_view.h).
double EstimateAllGatherHierarchicalUs(const CostQuery& q, const CostModel& c) {
  return RailRingsUs(q.topology, q.bytes(), c);
}

int SegmentsAllGatherHierarchicalPipelined(const CostQuery& q, const CostModel& c) {
  return CheapestRailRingsSegments(q, c, /*rails_first=*/true);
}

double EstimateAllGatherHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c) {
  return RailRingsPipelinedUs(q.topology, q.bytes(), c,
                              SegmentsAllGatherHierarchicalPipelined(q, c),
                              /*rails_first=*/true);
}

// lg H rail steps in which a host's group of `mask` hosts (with the hosts folded into
// them) goes to the partner group as one message per block, the fold and unfold of the
// hosts beyond a power of two, then the same ring of rail sets inside the host. A rail
// step's k messages to one peer: each after the first waits an intra latency to be posted
// (the per-message overhead of RailSetRingUs, a send and a receive each), but that wait
// overlaps the wire time of the blocks already moving, so it costs only where it exceeds
// a block's wire time (as the simulator's engine has it: sim/engine.h).
double EstimateAllGatherHierarchicalDoublingUs(const CostQuery& q, const CostModel& c) {
  const Topology& t = q.topology;
  const double block = q.bytes();
  const auto hosts = t.Hosts();
  const int num_hosts = static_cast<int>(hosts.size());
  const int local = static_cast<int>(hosts[0].size());
  const auto ring = RingAndRailPartners(hosts).first;
  const int pof2 = FloorPow2(num_hosts);
  const int rem = num_hosts - pof2;
  // One rail step: host position hp exchanges `blocks` blocks with partner_of(hp) (-1:
  // none), every local rank with its counterpart.
  auto rail_step = [&](const std::function<int(int)>& partner_of, int blocks) {
    const std::vector<int> partner = ParticipantPartners(
        t, num_hosts, local, [&](int hp, int i) { return hosts[hp][i]; }, partner_of);
    const double wire_one = StepUs(t, partner, block, c) - c.inter_alpha_us;
    return StepUs(t, partner, blocks * block, c) +
           (blocks - 1) * std::max(0.0, 2 * c.intra_alpha_us - wire_one);
  };
  double us = 0;
  if (rem > 0) {
    us += rail_step([&](int hp) { return hp >= pof2 ? hp - pof2 : -1; }, 1);
    us += rail_step([&](int hp) { return hp < rem ? hp + pof2 : -1; }, num_hosts - 1);
  }
  for (int mask = 1; mask < pof2; mask <<= 1) {
    // The group starting at host 0 carries the most folded hosts.
    const int blocks = mask + std::min(mask, rem);
    us += rail_step([&](int hp) { return hp < pof2 ? hp ^ mask : -1; }, blocks);
  }
  return us + RailSetRingUs(t, hosts, ring, block, c);
}

}  // namespace weft::sched::algo
