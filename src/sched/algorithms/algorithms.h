// Every algorithm's entry points, gathered here for the registry (sched/registry.cc).
// Each file in this folder defines, per algorithm, a Build* (a pure function of the
// spec) and next to it an Estimate*Us: the cost model's time for the steps that Build*
// lays out (sched/cost_model.h), written with the model's primitives, so that whoever
// changes the one sees the other.
#pragma once

#include "sched/cost_model.h"
#include "sched/registry.h"
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

// The estimates (Algorithm::estimate_us) take the call as a CostQuery, q.count as in
// CollectiveSpec: the whole buffer for allreduce, reduce and broadcast, one rank's block
// for allgather, reducescatter, gather and scatter, the block for each peer for alltoall.
// They are called for two ranks or more (EstimateUs answers for one).

// The spec's buffers are registered on every rank (CollectiveSpec::registered).
bool SupportsRegistered(const CollectiveSpec& spec);

Schedule BuildAllReduceHierarchical(const CollectiveSpec& spec);
Schedule BuildAllReduceHierarchicalRabenseifner(const CollectiveSpec& spec);
// The same in spec.segments segments, their phases overlapped (allreduce_hierarchical.cc);
// for several hosts with several ranks each.
bool SupportsHierarchicalPipelined(const CollectiveSpec& spec);
Schedule BuildAllReduceHierarchicalPipelined(const CollectiveSpec& spec);
Schedule BuildAllReduceHierarchicalRabenseifnerPipelined(const CollectiveSpec& spec);
double EstimateAllReduceHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceHierarchicalRabenseifnerPipelinedUs(const CostQuery& q,
                                                            const CostModel& c);
// Their segment counts (Algorithm::segments): the cheapest in the model.
int SegmentsAllReduceHierarchicalPipelined(const CostQuery& q, const CostModel& c);
int SegmentsAllReduceHierarchicalRabenseifnerPipelined(const CostQuery& q, const CostModel& c);
Schedule BuildAllReduceRing(const CollectiveSpec& spec);
Schedule BuildAllReduceRecursiveDoubling(const CollectiveSpec& spec);
Schedule BuildAllReduceBinomial(const CollectiveSpec& spec);
Schedule BuildAllReduceRabenseifner(const CollectiveSpec& spec);
Schedule BuildAllReduceSinglePass(const CollectiveSpec& spec);
double EstimateAllReduceHierarchicalUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceHierarchicalRabenseifnerUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceRingUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceRecursiveDoublingUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceBinomialUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceRabenseifnerUs(const CostQuery& q, const CostModel& c);
double EstimateAllReduceSinglePassUs(const CostQuery& q, const CostModel& c);
// The margin of the rail butterflies: the hierarchical allreduce with Rabenseifner rails
// and the hierarchical allgather with recursive-doubling rails.
Margin RailButterflyMargin(const CostModel& c);

Schedule BuildReduceBinomial(const CollectiveSpec& spec);
Schedule BuildReduceRing(const CollectiveSpec& spec);
Schedule BuildReduceSinglePass(const CollectiveSpec& spec);
double EstimateReduceBinomialUs(const CostQuery& q, const CostModel& c);
double EstimateReduceRingUs(const CostQuery& q, const CostModel& c);
double EstimateReduceSinglePassUs(const CostQuery& q, const CostModel& c);

Schedule BuildBroadcastHierarchical(const CollectiveSpec& spec);
Schedule BuildBroadcastBinomial(const CollectiveSpec& spec);
Schedule BuildBroadcastRing(const CollectiveSpec& spec);
Schedule BuildBroadcastScatterAllGather(const CollectiveSpec& spec);
Schedule BuildBroadcastSinglePass(const CollectiveSpec& spec);
double EstimateBroadcastHierarchicalUs(const CostQuery& q, const CostModel& c);
double EstimateBroadcastBinomialUs(const CostQuery& q, const CostModel& c);
double EstimateBroadcastRingUs(const CostQuery& q, const CostModel& c);
double EstimateBroadcastScatterAllGatherUs(const CostQuery& q, const CostModel& c);
double EstimateBroadcastSinglePassUs(const CostQuery& q, const CostModel& c);
Margin BroadcastHierarchicalMargin(const CostModel& c);

Schedule BuildAllGatherHierarchical(const CollectiveSpec& spec);
Schedule BuildAllGatherHierarchicalDoubling(const CollectiveSpec& spec);
// In spec.segments overlapping segments (rail_view.cc): several hosts of equal size with
// several ranks each.
bool SupportsRailRingsPipelined(const CollectiveSpec& spec);
Schedule BuildAllGatherHierarchicalPipelined(const CollectiveSpec& spec);
double EstimateAllGatherHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c);
int SegmentsAllGatherHierarchicalPipelined(const CostQuery& q, const CostModel& c);
Schedule BuildAllGatherRing(const CollectiveSpec& spec);
Schedule BuildAllGatherRecursiveDoubling(const CollectiveSpec& spec);
Schedule BuildAllGatherBruck(const CollectiveSpec& spec);
Schedule BuildAllGatherSinglePass(const CollectiveSpec& spec);
double EstimateAllGatherHierarchicalUs(const CostQuery& q, const CostModel& c);
double EstimateAllGatherHierarchicalDoublingUs(const CostQuery& q, const CostModel& c);
double EstimateAllGatherRingUs(const CostQuery& q, const CostModel& c);
double EstimateAllGatherRecursiveDoublingUs(const CostQuery& q, const CostModel& c);
double EstimateAllGatherBruckUs(const CostQuery& q, const CostModel& c);
double EstimateAllGatherSinglePassUs(const CostQuery& q, const CostModel& c);

Schedule BuildReduceScatterHierarchical(const CollectiveSpec& spec);
Schedule BuildReduceScatterHierarchicalPipelined(const CollectiveSpec& spec);
double EstimateReduceScatterHierarchicalPipelinedUs(const CostQuery& q, const CostModel& c);
int SegmentsReduceScatterHierarchicalPipelined(const CostQuery& q, const CostModel& c);
Schedule BuildReduceScatterRing(const CollectiveSpec& spec);
Schedule BuildReduceScatterPairwise(const CollectiveSpec& spec);
Schedule BuildReduceScatterRecursiveHalving(const CollectiveSpec& spec);
Schedule BuildReduceScatterSinglePass(const CollectiveSpec& spec);
double EstimateReduceScatterHierarchicalUs(const CostQuery& q, const CostModel& c);
double EstimateReduceScatterRingUs(const CostQuery& q, const CostModel& c);
double EstimateReduceScatterPairwiseUs(const CostQuery& q, const CostModel& c);
double EstimateReduceScatterRecursiveHalvingUs(const CostQuery& q, const CostModel& c);
double EstimateReduceScatterSinglePassUs(const CostQuery& q, const CostModel& c);

Schedule BuildAllToAllPairwise(const CollectiveSpec& spec);
Schedule BuildAllToAllBruck(const CollectiveSpec& spec);
double EstimateAllToAllPairwiseUs(const CostQuery& q, const CostModel& c);
double EstimateAllToAllBruckUs(const CostQuery& q, const CostModel& c);
// Registered buffers with every rank's call out of place (CollectiveSpec::may_be_in_place).
bool SupportsRegisteredOutOfPlace(const CollectiveSpec& spec);
Schedule BuildAllToAllSinglePass(const CollectiveSpec& spec);
double EstimateAllToAllSinglePassUs(const CostQuery& q, const CostModel& c);

Schedule BuildGatherBinomial(const CollectiveSpec& spec);
Schedule BuildGatherLinear(const CollectiveSpec& spec);
Schedule BuildGatherSinglePass(const CollectiveSpec& spec);
double EstimateGatherBinomialUs(const CostQuery& q, const CostModel& c);
double EstimateGatherLinearUs(const CostQuery& q, const CostModel& c);
double EstimateGatherSinglePassUs(const CostQuery& q, const CostModel& c);

Schedule BuildScatterBinomial(const CollectiveSpec& spec);
Schedule BuildScatterLinear(const CollectiveSpec& spec);
Schedule BuildScatterSinglePass(const CollectiveSpec& spec);
double EstimateScatterBinomialUs(const CostQuery& q, const CostModel& c);
double EstimateScatterLinearUs(const CostQuery& q, const CostModel& c);
double EstimateScatterSinglePassUs(const CostQuery& q, const CostModel& c);

// The barrier's one algorithm: its estimate is not weighed against another's, only told
// (weftGroupSimulateEnd).
Schedule BuildBarrierDissemination(const CollectiveSpec& spec);
double EstimateBarrierDisseminationUs(const CostQuery& q, const CostModel& c);

}  // namespace weft::sched::algo
