// Every algorithm's entry points, one pair per file in this folder, gathered here for
// the registry (sched/registry.cc). Each Build* is a pure function of the spec.
#pragma once

#include "sched/schedule.h"

namespace weft::sched::algo {

// Most algorithms run on any world size.
inline bool AnySize(const CollectiveSpec&) { return true; }
inline bool PowerOfTwoSize(const CollectiveSpec& spec) {
  return spec.size > 0 && (spec.size & (spec.size - 1)) == 0;
}

// The spec carries a topology that covers its world (topology-aware algorithms).
bool HasTopology(const CollectiveSpec& spec);
// ... and every host has the same number of ranks.
bool HasUniformTopology(const CollectiveSpec& spec);
// The spec's topology; where it has none (or, with `require_uniform`, where its hosts
// differ in size), one rank per host, so that a hierarchical algorithm degenerates to
// its flat counterpart instead of failing.
Topology TopologyOrFlat(const CollectiveSpec& spec, bool require_uniform = false);

Schedule BuildAllReduceHierarchical(const CollectiveSpec& spec);
Schedule BuildAllReduceHierarchicalRabenseifner(const CollectiveSpec& spec);
Schedule BuildAllReduceRing(const CollectiveSpec& spec);
Schedule BuildAllReduceRecursiveDoubling(const CollectiveSpec& spec);
Schedule BuildAllReduceBinomial(const CollectiveSpec& spec);
Schedule BuildAllReduceRabenseifner(const CollectiveSpec& spec);

Schedule BuildReduceBinomial(const CollectiveSpec& spec);
Schedule BuildReduceRing(const CollectiveSpec& spec);

Schedule BuildBroadcastHierarchical(const CollectiveSpec& spec);
// Segments of the hierarchical broadcast's inter-host chain for a chunk of `chunk`
// elements on `num_hosts` hosts; 1 means a binomial tree over the hosts instead (shared
// with the planner's cost model).
size_t HierarchicalBroadcastSegments(size_t chunk, int num_hosts);
// Segments of the ring broadcast's chain for `count` elements on `size` ranks (shared
// with the planner's cost model).
size_t RingBroadcastSegments(size_t count, int size);
Schedule BuildBroadcastBinomial(const CollectiveSpec& spec);
Schedule BuildBroadcastRing(const CollectiveSpec& spec);
Schedule BuildBroadcastScatterAllGather(const CollectiveSpec& spec);

Schedule BuildAllGatherHierarchical(const CollectiveSpec& spec);
Schedule BuildAllGatherHierarchicalDoubling(const CollectiveSpec& spec);
Schedule BuildAllGatherRing(const CollectiveSpec& spec);
Schedule BuildAllGatherRecursiveDoubling(const CollectiveSpec& spec);
Schedule BuildAllGatherBruck(const CollectiveSpec& spec);

Schedule BuildReduceScatterHierarchical(const CollectiveSpec& spec);
Schedule BuildReduceScatterRing(const CollectiveSpec& spec);
Schedule BuildReduceScatterPairwise(const CollectiveSpec& spec);
Schedule BuildReduceScatterRecursiveHalving(const CollectiveSpec& spec);

Schedule BuildAllToAllPairwise(const CollectiveSpec& spec);
Schedule BuildAllToAllBruck(const CollectiveSpec& spec);

Schedule BuildGatherBinomial(const CollectiveSpec& spec);
Schedule BuildGatherLinear(const CollectiveSpec& spec);

Schedule BuildScatterBinomial(const CollectiveSpec& spec);
Schedule BuildScatterLinear(const CollectiveSpec& spec);

Schedule BuildBarrierDissemination(const CollectiveSpec& spec);

}  // namespace weft::sched::algo
