// The planner across hosts weighs every algorithm of the collective with the cost model
// and takes the cheapest. The cases come from the measured 4 hosts x 2 ranks run at
// 0.5 Gbit/s per host link (docs/BENCHMARKS.md), where weighing only the size
// thresholds' choice against hierarchical picked recursive doubling for a 32 KiB
// allreduce (1.7x the hierarchical time) and hierarchical broadcasts the ring beat.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/planner.h"
#include "sched/registry.h"

namespace weft::sched {
namespace {

std::shared_ptr<const Topology> Contiguous(const std::vector<int>& per_host) {
  return std::make_shared<const Topology>(Topology::Contiguous(per_host));
}

// The model's estimate for `coll`'s algorithm `name`.
double Estimate(Collective coll, const char* name, const CostQuery& q, const CostModel& c) {
  const Algorithm* algorithm = FindAlgorithm(coll, name);
  EXPECT_NE(algorithm, nullptr) << name;
  return algorithm == nullptr ? -1 : EstimateUs(*algorithm, q, c);
}

// float32 elements; `bytes` is the whole buffer (allreduce, broadcast) or one rank's
// block (allgather, reducescatter).
PlanRequest Request(Collective coll, size_t bytes, std::shared_ptr<const Topology> t,
                    int root = 0) {
  CollectiveSpec spec{coll, 0, static_cast<int>(t->host_of.size()), root, bytes / 4};
  spec.topology = std::move(t);
  return PlanRequest{spec, 4};
}

// The shaped network of the measured run: 0.5 Gbit/s per host, other figures default.
CostModel SlowLink() { return CostModel::Parse("inter_gbps=0.5").value(); }
// Four NICs per host (as p4d.24xlarge).
CostModel FourLinks() { return CostModel::Parse("inter_links=4").value(); }

const Collective kWeighed[] = {Collective::kAllReduce,     Collective::kAllGather,
                               Collective::kReduceScatter, Collective::kBroadcast,
                               Collective::kReduce,        Collective::kGather,
                               Collective::kScatter,       Collective::kAllToAll};

bool Rooted(Collective coll) {
  return coll == Collective::kBroadcast || coll == Collective::kReduce ||
         coll == Collective::kGather || coll == Collective::kScatter;
}

TEST(PlannerWeighsAll, AllReduce32KiBOnSlowLinkTakesTheCheapest) {
  const Planner p = Planner::Create("", SlowLink()).value();
  const PlanRequest req = Request(Collective::kAllReduce, 32 << 10, Contiguous({2, 2, 2, 2}));
  auto choice = p.Explain(req);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  // By hand (62.5 B/us between hosts): recursive doubling sends the whole 32 KiB over
  // two inter-host steps with both ranks of a host leaving at once (~2150 us); the
  // hierarchical rails send 4 KiB per rank in 6 steps (~940 us); the ring 4 KiB in 14
  // (~1270 us).
  double best = -1;
  std::string cheapest;
  for (const char* name :
       {"ring", "recursive_doubling", "rabenseifner", "binomial", "hierarchical"}) {
    const double us = EstimateUs(name, req.spec, 4, SlowLink());
    ASSERT_GE(us, 0) << name;
    if (best < 0 || us < best) best = us, cheapest = name;
  }
  EXPECT_EQ(cheapest, "hierarchical");
  EXPECT_STREQ(choice.value().algorithm->name, cheapest.c_str()) << choice.value().reason;
}

TEST(PlannerWeighsAll, HierarchicalBroadcastNeedsAMarginOnSlowLink) {
  const Planner p = Planner::Create("", SlowLink()).value();
  const auto t = Contiguous({2, 2, 2, 2});
  for (size_t bytes = 64 << 10; bytes <= (4 << 20); bytes *= 2) {
    for (int root : {0, 1, 5}) {
      const PlanRequest req = Request(Collective::kBroadcast, bytes, t, root);
      auto choice = p.Explain(req);
      ASSERT_TRUE(choice.ok());
      const double ring = EstimateUs("ring", req.spec, 4, SlowLink());
      const double hier = EstimateUs("hierarchical", req.spec, 4, SlowLink());
      // With one link per host both carry the message once per host link; the model
      // must not hand hierarchical the choice on a difference in the noise.
      if (std::string(choice.value().algorithm->name) == "hierarchical") {
        EXPECT_LT(hier, 0.9 * ring) << bytes << " root " << root << ": " << choice.value().reason;
      }
      // And as measured: none of these sizes goes hierarchical.
      EXPECT_STRNE(choice.value().algorithm->name, "hierarchical")
          << bytes << " root " << root << ": " << choice.value().reason;
    }
  }
}

// The 64 KiB case by hand: the ring's 8 segments of 8 KiB pay 3 inter-host and 4 shm
// hops once (the fill) and one inter-host hop per further segment; hierarchical's
// 32 KiB chunks cannot be pipelined and go down a binomial tree over the 4 hosts, in
// which the root's host sends both chunks twice (the whole message twice on its link).
TEST(PlannerWeighsAll, BroadcastModelFollowsTheSchedules) {
  const Topology t = Topology::Contiguous({2, 2, 2, 2});
  const CostModel c = SlowLink();
  const double inter = 25 + 8192 / 62.5, intra = 2 + 8192 / 10000.0;
  EXPECT_NEAR(Estimate(Collective::kBroadcast, "ring", {t, 16384, 4}, c),
              3 * inter + 4 * intra + 7 * inter, 1e-6);
  const double tree_level = 25 + 2 * 32768 / 62.5;  // both rails leave the host together
  const double shm_chunk = 2 + 32768 / 10000.0;     // the scatter, and the allgather
  EXPECT_NEAR(Estimate(Collective::kBroadcast, "hierarchical", {t, 16384, 4}, c),
              shm_chunk + 2 * tree_level + shm_chunk, 1e-6);
  EXPECT_LT(Estimate(Collective::kBroadcast, "ring", {t, 16384, 4}, c),
            Estimate(Collective::kBroadcast, "hierarchical", {t, 16384, 4}, c));
  // 4 MiB: hierarchical pipelines 32 segments of 64 KiB per rail, both rails on the link.
  const double hop = 25 + 2 * 65536 / 62.5, shm_half = 2 + 2097152 / 10000.0;
  EXPECT_NEAR(Estimate(Collective::kBroadcast, "hierarchical", {t, 1 << 20, 4}, c),
              shm_half + (3 + 31) * hop + shm_half, 1e-6);
}

// Whatever the collective, size, topology and figures: the choice is the cheapest of the
// candidates (hierarchical broadcast and the rail butterflies after their margins), and the reason
// names every algorithm that supports the call, with its modelled time.
TEST(PlannerWeighsAll, ChoiceIsTheCheapestAndTheReasonListsEveryCandidate) {
  for (const CostModel& costs : {CostModel(), SlowLink(), FourLinks()}) {
    const Planner p = Planner::Create("", costs).value();
    for (const std::vector<int>& per_host :
         std::vector<std::vector<int>>{{2, 2}, {2, 2, 2, 2}, {3, 2}, {4, 4, 4}, {8, 8, 8, 8}}) {
      const auto t = Contiguous(per_host);
      for (Collective coll : kWeighed) {
        for (size_t bytes = 64; bytes <= (64 << 20); bytes *= 8) {
          const PlanRequest req = Request(coll, bytes, t, Rooted(coll) ? 1 : 0);
          auto choice = p.Explain(req);
          ASSERT_TRUE(choice.ok());
          const std::string& why = choice.value().reason;
          const Algorithm* chosen = choice.value().algorithm;
          EXPECT_NE(why.find("cost model"), std::string::npos) << why;
          // Ranked by time / (1 - margin): 10% for hierarchical broadcast on one link per
          // host and for the rail butterflies (allreduce, allgather), else none.
          auto weighed = [&](const Algorithm& a) {
            const double us = EstimateUs(a.name, req.spec, 4, costs);
            const bool hier_bcast =
                coll == Collective::kBroadcast && std::string(a.name) == "hierarchical";
            const bool rail_butterfly =
                std::string(a.name).rfind("hierarchical_rabenseifner", 0) == 0 ||
                std::string(a.name) == "hierarchical_doubling";
            return (hier_bcast && costs.inter_links == 1) || rail_butterfly ? us / 0.9 : us;
          };
          int candidates = 0;
          for (const Algorithm& a : AllAlgorithms()) {
            if (a.coll != coll || !a.supports(req.spec)) continue;
            const double us = EstimateUs(a.name, req.spec, 4, costs);
            ASSERT_GE(us, 0) << CollectiveName(coll) << " " << a.name << " has no model";
            ++candidates;
            EXPECT_NE(why.find(fmt::format("{} {:.1f} us", a.name, us)), std::string::npos)
                << a.name << " missing from: " << why;
            EXPECT_LE(weighed(*chosen), weighed(a) * (1 + 1e-12)) << why;
          }
          EXPECT_GE(candidates, 2) << why;
        }
      }
    }
  }
}

// The hierarchical margin holds against every other broadcast, not only the ring.
TEST(PlannerWeighsAll, HierarchicalBroadcastChosenOnlyWithTheMargin) {
  for (const CostModel& costs : {CostModel(), SlowLink()}) {
    const Planner p = Planner::Create("", costs).value();
    for (const std::vector<int>& per_host :
         std::vector<std::vector<int>>{{2, 2}, {2, 2, 2, 2}, {4, 4}, {8, 8, 8, 8}, {3, 2}}) {
      const auto t = Contiguous(per_host);
      for (size_t bytes = 64; bytes <= (256 << 20); bytes *= 4) {
        const PlanRequest req = Request(Collective::kBroadcast, bytes, t);
        auto choice = p.Explain(req);
        ASSERT_TRUE(choice.ok());
        if (std::string(choice.value().algorithm->name) != "hierarchical") continue;
        const double hier = EstimateUs("hierarchical", req.spec, 4, costs);
        for (const char* other : {"ring", "binomial", "scatter_allgather"}) {
          EXPECT_LE(hier, 0.9 * EstimateUs(other, req.spec, 4, costs))
              << other << ": " << choice.value().reason;
        }
      }
    }
  }
}

// With several links per host the rails run side by side: the model sees the gain and
// hierarchical broadcast needs no margin. 16 hosts x 8 ranks, 4 links per host (p4d): it
// wins every size from 1 MiB; on one link per host the ring keeps some of them.
TEST(PlannerWeighsAll, SeveralLinksPerHostLetTheRailsWin) {
  const auto t = Contiguous(std::vector<int>(16, 8));
  const Planner four = Planner::Create("", FourLinks()).value();
  for (size_t bytes = 1 << 20; bytes <= (256 << 20); bytes *= 4) {
    auto choice = four.Explain(Request(Collective::kBroadcast, bytes, t));
    ASSERT_TRUE(choice.ok());
    EXPECT_STREQ(choice.value().algorithm->name, "hierarchical") << choice.value().reason;
    EXPECT_NE(choice.value().reason.find("x 4 links"), std::string::npos);
    EXPECT_EQ(choice.value().reason.find("needs 10%"), std::string::npos);
  }
  // Rails on separate links: the hierarchical allreduce's rail step on 2 x 2 costs one
  // message per link, not two on one.
  const Topology two = Topology::Contiguous({2, 2});
  const CostModel links2 = CostModel::Parse("inter_links=2").value();
  EXPECT_NEAR(Estimate(Collective::kAllReduce, "hierarchical", {two, size_t(4e6)}, links2),
              2 * (2 + 2e6 / 10000) + 2 * (25 + 1e6 / 1250), 1e-6);
  EXPECT_NEAR(Estimate(Collective::kAllReduce, "hierarchical", {two, size_t(4e6)}, CostModel()),
              2 * (2 + 2e6 / 10000) + 2 * (25 + 2 * 1e6 / 1250), 1e-6);
}

TEST(PlannerWeighsAll, InterLinksParse) {
  EXPECT_EQ(CostModel::Parse("inter_links=4").value().inter_links, 4);
  EXPECT_EQ(CostModel().inter_links, 1);
  EXPECT_FALSE(CostModel::Parse("inter_links=0").ok());
  EXPECT_FALSE(CostModel::Parse("inter_links=1.5").ok());
  EXPECT_FALSE(CostModel::Parse("inter_links=100000").ok());
  EXPECT_EQ(CostModel().ToString().find("links"), std::string::npos);
}

// A host's busiest link: with fewer links than ranks, its messages spread over the links;
// with a link or more per rank, each rank stripes its own messages over the links it owns
// (p5.48xlarge: 32 NICs, 8 GPUs, 4 NICs each), as the simulator's rail policy does.
TEST(PlannerWeighsAll, InterLinkLoadStripesOverTheLinksARankOwns) {
  EXPECT_EQ(InterLinkLoad(0, 0, 8, 32), 0);
  EXPECT_EQ(InterLinkLoad(1, 1, 1, 1), 1);
  EXPECT_EQ(InterLinkLoad(8, 1, 8, 4), 2);  // p4d: 8 ranks over 4 NICs
  EXPECT_EQ(InterLinkLoad(3, 1, 8, 4), 1);
  EXPECT_EQ(InterLinkLoad(2, 1, 2, 2), 1);      // a link each
  EXPECT_EQ(InterLinkLoad(2, 2, 2, 2), 2);      // both from one rank: its own link only
  EXPECT_EQ(InterLinkLoad(8, 1, 8, 32), 0.25);  // p5: a message over 4 NICs
  EXPECT_EQ(InterLinkLoad(16, 2, 8, 32), 0.5);
  EXPECT_EQ(InterLinkLoad(1, 1, 8, 32), 0.25);  // one rank of 8 still owns only 4
  EXPECT_EQ(InterLinkLoad(8, 1, 8, 33), 0.25);  // 33 / 8: 4 whole links each

  // In a step: 2 hosts x 8 ranks, rank r sends 1 MB to r + 8 (a rail step), at 100 Gbit/s
  // (12500 B/us) per link and 32 links per host: a quarter of one link's time each.
  const Topology t = Topology::Contiguous({8, 8});
  const CostModel c = CostModel::Parse("inter_alpha_us=15,inter_gbps=100,inter_links=32").value();
  std::vector<std::pair<int, int>> rail;
  for (int r = 0; r < 8; ++r) rail.emplace_back(r, r + 8);
  EXPECT_NEAR(MessagesUs(t, rail, 1e6, c), 15 + 0.25 * 1e6 / 12500, 1e-9);
  rail.emplace_back(0, 9);  // rank 0 sends two: its 4 links carry both
  EXPECT_NEAR(MessagesUs(t, rail, 1e6, c), 15 + 0.5 * 1e6 / 12500 + 2, 1e-9);
}

// Many-to-one steps cost the root host's incoming link: on 2 x 2 a linear gather to rank 0
// brings 2 blocks in over host 0's link at once (and the root handles 3 messages: 2 more
// intra latencies), a binomial one 1 block then 2 (rank 2's subtree), leaves first.
TEST(PlannerWeighsAll, GatherScatterAllToAllModelsByHand) {
  const Topology t = Topology::Contiguous({2, 2});
  const CostModel c;  // intra 10000 B/us, inter 1250 B/us
  const double b = 1e6;
  EXPECT_NEAR(Estimate(Collective::kGather, "linear", {t, size_t(b)}, c), 25 + 2 * b / 1250 + 2 * 2,
              1e-6);
  EXPECT_NEAR(Estimate(Collective::kScatter, "linear", {t, size_t(b)}, c),
              25 + 2 * b / 1250 + 2 * 2, 1e-6);
  EXPECT_NEAR(Estimate(Collective::kGather, "binomial", {t, size_t(b)}, c),
              (2 + b / 10000) + (25 + 2 * b / 1250), 1e-6);
  EXPECT_NEAR(Estimate(Collective::kScatter, "binomial", {t, size_t(b)}, c),
              (25 + 2 * b / 1250) + (2 + b / 10000), 1e-6);
  // Reduce ring: 3 ring steps of n/4 (one message leaves each host), then ranks 1..3 send
  // their quarters to the root, 2 of them over host 0's link.
  EXPECT_NEAR(Estimate(Collective::kReduce, "ring", {t, size_t(4 * b)}, c),
              3 * (25 + b / 1250) + (25 + 2 * b / 1250 + 2 * 2), 1e-6);
  // Alltoall pairwise: steps to r+1 (one block leaves each host), r+2 (both), r+3 (one).
  EXPECT_NEAR(Estimate(Collective::kAllToAll, "pairwise", {t, size_t(b)}, c),
              2 * (25 + b / 1250) + (25 + 2 * b / 1250), 1e-6);
  // Bruck: bit 1 moves 2 blocks to r+1, bit 2 moves 2 blocks to r+2.
  EXPECT_NEAR(Estimate(Collective::kAllToAll, "bruck", {t, size_t(b)}, c),
              (25 + 2 * b / 1250) + (25 + 4 * b / 1250), 1e-6);
  // The barrier: empty messages to r+1 (one leaves and one arrives at each host), then to
  // r+2 (two leave each host over its one link): an inter latency each.
  CollectiveSpec barrier{Collective::kBarrier, 0, 4, 0, 0};
  barrier.topology = std::make_shared<const Topology>(t);
  EXPECT_NEAR(EstimateUs("dissemination", barrier, 1, c), 25 + 25, 1e-9);
}

// One host, or no topology: the measured size thresholds choose, as before.
TEST(PlannerWeighsAll, OneHostKeepsTheThresholds) {
  const Planner p = Planner::Create("", SlowLink()).value();
  for (Collective coll : kWeighed) {
    for (size_t bytes : {size_t{64}, size_t{32} << 10, size_t{4} << 20}) {
      PlanRequest req = Request(coll, bytes, Contiguous({8}));
      EXPECT_NE(p.Explain(req).value().reason.find("size thresholds"), std::string::npos);
      req.spec.topology = nullptr;
      EXPECT_NE(p.Explain(req).value().reason.find("size thresholds"), std::string::npos);
    }
  }
  // 32 KiB allreduce on one host: recursive doubling, as measured there.
  EXPECT_STREQ(p.Choose(Request(Collective::kAllReduce, 32 << 10, Contiguous({8}))).value()->name,
               "recursive_doubling");
}

// WEFT_ALGO still wins over the model.
TEST(PlannerWeighsAll, WeftAlgoStillForces) {
  const Planner p =
      Planner::Create("allreduce:recursive_doubling,broadcast:hierarchical", SlowLink()).value();
  const auto t = Contiguous({2, 2, 2, 2});
  auto ar = p.Explain(Request(Collective::kAllReduce, 32 << 10, t));
  EXPECT_STREQ(ar.value().algorithm->name, "recursive_doubling");
  EXPECT_NE(ar.value().reason.find("forced by WEFT_ALGO"), std::string::npos);
  EXPECT_STREQ(p.Choose(Request(Collective::kBroadcast, 64 << 10, t)).value()->name,
               "hierarchical");
}

}  // namespace
}  // namespace weft::sched
