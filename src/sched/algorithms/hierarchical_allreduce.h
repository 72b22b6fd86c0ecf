// What the hierarchical allreduce's schedules (allreduce_hierarchical.cc) and their cost
// estimates (allreduce_hierarchical_cost.cc) share: how the rails exchange, and how many
// rounds that takes, which sets where a pipelined schedule's segments start.
#pragma once

namespace weft::sched::algo {

enum class RailExchange { kRing, kHalvingDoubling };

// Rounds of the rails' allreduce, the same on every rank (0 on one host): 2(H-1) for the
// ring; 2 lg H' for Rabenseifner's over the largest power of two H' <= H, +2 to fold the
// rest in and out.
int HierarchicalRailRounds(RailExchange rail, int num_hosts);

}  // namespace weft::sched::algo
