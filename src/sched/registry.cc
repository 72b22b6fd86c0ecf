// The table of every algorithm: its builder, its cost estimate and margin, all defined in
// its file in algorithms/. Order matters only for listings (and is stable) and for the
// planner's ties, which go to the size thresholds' choice and then to the first
// registered.
#include "sched/registry.h"

#include "sched/algorithms/algorithms.h"

namespace weft::sched {

const std::vector<Algorithm>& AllAlgorithms() {
  using C = Collective;
  namespace a = algo;
  static const std::vector<Algorithm> kAlgorithms = {
      {"ring", C::kAllReduce,
       "ring reduce-scatter then ring allgather; bandwidth-optimal for large messages", a::AnySize,
       a::BuildAllReduceRing, a::EstimateAllReduceRingUs},
      {"recursive_doubling", C::kAllReduce,
       "lg p whole-vector exchanges, extra ranks folded in; latency-optimal for small messages",
       a::AnySize, a::BuildAllReduceRecursiveDoubling, a::EstimateAllReduceRecursiveDoublingUs},
      {"binomial", C::kAllReduce, "binomial-tree reduce to rank 0 then binomial broadcast",
       a::AnySize, a::BuildAllReduceBinomial, a::EstimateAllReduceBinomialUs},
      {"rabenseifner", C::kAllReduce,
       "recursive-halving reduce-scatter then recursive-doubling allgather; large messages",
       a::AnySize, a::BuildAllReduceRabenseifner, a::EstimateAllReduceRabenseifnerUs},
      {"hierarchical", C::kAllReduce,
       "reduce-scatter inside each host, one ring across hosts per local rank, allgather "
       "inside each host; needs the topology",
       a::HasTopology, a::BuildAllReduceHierarchical, a::EstimateAllReduceHierarchicalUs},
      {"hierarchical_rabenseifner", C::kAllReduce,
       "as hierarchical, but recursive halving and doubling across hosts (2 lg H latencies "
       "instead of the ring's 2(H-1)); needs the topology",
       a::HasTopology, a::BuildAllReduceHierarchicalRabenseifner,
       a::EstimateAllReduceHierarchicalRabenseifnerUs, a::RailButterflyMargin},
      {"hierarchical_pipelined", C::kAllReduce,
       "as hierarchical, the buffer cut into segments whose phases overlap: one segment "
       "crosses the hosts while the next is reduced inside them; needs the topology",
       a::SupportsHierarchicalPipelined, a::BuildAllReduceHierarchicalPipelined,
       a::EstimateAllReduceHierarchicalPipelinedUs, nullptr,
       a::SegmentsAllReduceHierarchicalPipelined},
      {"hierarchical_rabenseifner_pipelined", C::kAllReduce,
       "as hierarchical_rabenseifner, in overlapping segments as hierarchical_pipelined; "
       "needs the topology",
       a::SupportsHierarchicalPipelined, a::BuildAllReduceHierarchicalRabenseifnerPipelined,
       a::EstimateAllReduceHierarchicalRabenseifnerPipelinedUs, a::RailButterflyMargin,
       a::SegmentsAllReduceHierarchicalRabenseifnerPipelined},
      {"single_pass", C::kAllReduce,
       "registered buffers on one host: each rank reduces its chunk from every input in "
       "place and writes it into every output; flags order the accesses",
       a::SupportsRegistered, a::BuildAllReduceSinglePass, a::EstimateAllReduceSinglePassUs},

      {"binomial", C::kReduce, "binomial-tree reduce to the root", a::AnySize,
       a::BuildReduceBinomial, a::EstimateReduceBinomialUs},
      {"ring", C::kReduce, "ring reduce-scatter then every chunk straight to the root", a::AnySize,
       a::BuildReduceRing, a::EstimateReduceRingUs},
      {"single_pass", C::kReduce,
       "registered buffers on one host: each rank reduces its chunk from every input in "
       "place and writes it into the root's output; flags order the accesses",
       a::SupportsRegistered, a::BuildReduceSinglePass, a::EstimateReduceSinglePassUs},

      {"binomial", C::kBroadcast, "binomial-tree broadcast: lg p rounds of whole messages",
       a::AnySize, a::BuildBroadcastBinomial, a::EstimateBroadcastBinomialUs},
      {"ring", C::kBroadcast, "pipelined chain from the root, message cut into segments",
       a::AnySize, a::BuildBroadcastRing, a::EstimateBroadcastRingUs},
      {"scatter_allgather", C::kBroadcast,
       "binomial scatter of chunks then ring allgather (van de Geijn); large messages", a::AnySize,
       a::BuildBroadcastScatterAllGather, a::EstimateBroadcastScatterAllGatherUs},
      {"hierarchical", C::kBroadcast,
       "scatter inside the root's host, one broadcast across hosts per local rank (chain, or "
       "tree for small chunks), allgather inside each host; needs the topology",
       a::HasTopology, a::BuildBroadcastHierarchical, a::EstimateBroadcastHierarchicalUs,
       a::BroadcastHierarchicalMargin},
      {"single_pass", C::kBroadcast,
       "registered buffers on one host: every rank reads the root's input into its output, "
       "in parallel; flags order the accesses",
       a::SupportsRegistered, a::BuildBroadcastSinglePass, a::EstimateBroadcastSinglePassUs},

      {"ring", C::kAllGather, "ring allgather: p-1 steps of one block", a::AnySize,
       a::BuildAllGatherRing, a::EstimateAllGatherRingUs},
      {"hierarchical", C::kAllGather,
       "one ring across hosts per local rank, then a ring of those blocks inside each host; "
       "needs the topology, equal ranks per host",
       a::HasUniformTopology, a::BuildAllGatherHierarchical, a::EstimateAllGatherHierarchicalUs},
      {"hierarchical_doubling", C::kAllGather,
       "as hierarchical, but recursive doubling across hosts (lg H latencies instead of "
       "H-1, the same H-1 blocks); needs the topology, equal ranks per host",
       a::HasUniformTopology, a::BuildAllGatherHierarchicalDoubling,
       a::EstimateAllGatherHierarchicalDoublingUs, a::RailButterflyMargin},
      {"hierarchical_pipelined", C::kAllGather,
       "as hierarchical, the blocks cut into segments whose phases overlap: one segment goes "
       "round the host while the next crosses the rails; equal hosts of several ranks",
       a::SupportsRailRingsPipelined, a::BuildAllGatherHierarchicalPipelined,
       a::EstimateAllGatherHierarchicalPipelinedUs, nullptr,
       a::SegmentsAllGatherHierarchicalPipelined},
      {"recursive_doubling", C::kAllGather,
       "lg p exchanges of doubling block ranges; power-of-two world sizes only", a::PowerOfTwoSize,
       a::BuildAllGatherRecursiveDoubling, a::EstimateAllGatherRecursiveDoublingUs},
      {"bruck", C::kAllGather, "Bruck: ceil(lg p) steps through scratch, then a rotation",
       a::AnySize, a::BuildAllGatherBruck, a::EstimateAllGatherBruckUs},
      {"single_pass", C::kAllGather,
       "registered buffers on one host: each rank writes its block into every output; "
       "flags order the accesses",
       a::SupportsRegistered, a::BuildAllGatherSinglePass, a::EstimateAllGatherSinglePassUs},

      {"ring", C::kReduceScatter, "ring reduce-scatter: p-1 steps of one block", a::AnySize,
       a::BuildReduceScatterRing, a::EstimateReduceScatterRingUs},
      {"pairwise", C::kReduceScatter,
       "direct: in step k send block r+k to its owner, reduce the block from r-k", a::AnySize,
       a::BuildReduceScatterPairwise, a::EstimateReduceScatterPairwiseUs},
      {"recursive_halving", C::kReduceScatter,
       "lg p rounds of halving block ranges; power-of-two world sizes only", a::PowerOfTwoSize,
       a::BuildReduceScatterRecursiveHalving, a::EstimateReduceScatterRecursiveHalvingUs},
      {"hierarchical", C::kReduceScatter,
       "reduce-scatter of per-rail block sets inside each host, then one ring across hosts "
       "per local rank; needs the topology, equal ranks per host",
       a::HasUniformTopology, a::BuildReduceScatterHierarchical,
       a::EstimateReduceScatterHierarchicalUs},
      {"hierarchical_pipelined", C::kReduceScatter,
       "as hierarchical, the blocks cut into segments whose phases overlap: one segment "
       "crosses the rails while the next is reduced in the host; equal hosts of several ranks",
       a::SupportsRailRingsPipelined, a::BuildReduceScatterHierarchicalPipelined,
       a::EstimateReduceScatterHierarchicalPipelinedUs, nullptr,
       a::SegmentsReduceScatterHierarchicalPipelined},
      {"single_pass", C::kReduceScatter,
       "registered buffers on one host: each rank reduces its block from every input in "
       "place; flags order the accesses",
       a::SupportsRegistered, a::BuildReduceScatterSinglePass,
       a::EstimateReduceScatterSinglePassUs},

      {"pairwise", C::kAllToAll,
       "p-1 steps; in step k send to r+k and receive from r-k; for large blocks", a::AnySize,
       a::BuildAllToAllPairwise, a::EstimateAllToAllPairwiseUs},
      {"bruck", C::kAllToAll, "Bruck: ceil(lg p) steps with packing; for small blocks", a::AnySize,
       a::BuildAllToAllBruck, a::EstimateAllToAllBruckUs},
      {"single_pass", C::kAllToAll,
       "registered buffers on one host, every call out of place: each rank reads its block "
       "of every input in place; flags order the accesses",
       a::SupportsRegisteredOutOfPlace, a::BuildAllToAllSinglePass,
       a::EstimateAllToAllSinglePassUs},

      {"binomial", C::kGather, "binomial tree: subtrees gathered through scratch", a::AnySize,
       a::BuildGatherBinomial, a::EstimateGatherBinomialUs},
      {"linear", C::kGather, "every rank sends its block straight to the root", a::AnySize,
       a::BuildGatherLinear, a::EstimateGatherLinearUs},
      {"single_pass", C::kGather,
       "registered buffers on one host: every rank writes its block into the root's "
       "output, in parallel; flags order the accesses",
       a::SupportsRegistered, a::BuildGatherSinglePass, a::EstimateGatherSinglePassUs},

      {"binomial", C::kScatter, "binomial tree: subtrees handed down through scratch", a::AnySize,
       a::BuildScatterBinomial, a::EstimateScatterBinomialUs},
      {"linear", C::kScatter, "the root sends every rank its block directly", a::AnySize,
       a::BuildScatterLinear, a::EstimateScatterLinearUs},
      {"single_pass", C::kScatter,
       "registered buffers on one host: every rank reads its block of the root's input, in "
       "parallel; flags order the accesses",
       a::SupportsRegistered, a::BuildScatterSinglePass, a::EstimateScatterSinglePassUs},

      {"dissemination", C::kBarrier, "ceil(lg p) rounds of empty messages to r + 2^k", a::AnySize,
       a::BuildBarrierDissemination, a::EstimateBarrierDisseminationUs},
  };
  return kAlgorithms;
}

const Algorithm* FindAlgorithm(Collective coll, std::string_view name) {
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll == coll && name == algorithm.name) return &algorithm;
  }
  return nullptr;
}

}  // namespace weft::sched
