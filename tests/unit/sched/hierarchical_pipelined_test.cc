// The pipelined hierarchical schedules: the allreduces (hierarchical_pipelined and
// hierarchical_rabenseifner_pipelined) and the allgather and reduce-scatter
// (hierarchical_pipelined). Every rank's schedule interpreted together against the
// plain-loop reference on even, uneven (allreduce) and interleaved hosts, for segment
// counts from 1 to more than the elements, in and out of place, with rendezvous and eager
// sends; the overlap itself (a rail step of one segment in the round of another's host
// step, never two segments on a rail at once); and the planner's choice of segments.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "interpreter.h"
#include "sched/planner.h"
#include "sched/registry.h"

namespace weft::sched::testing {
namespace {

const std::vector<const char*> kPipelined = {"hierarchical_pipelined",
                                             "hierarchical_rabenseifner_pipelined"};

const Algorithm& Find(const char* name) {
  const Algorithm* a = FindAlgorithm(Collective::kAllReduce, name);
  EXPECT_NE(a, nullptr) << name;
  return *a;
}

std::shared_ptr<const Topology> Contiguous(const std::vector<int>& per_host) {
  return std::make_shared<const Topology>(Topology::Contiguous(per_host));
}

// Every host with at least two ranks (what the pipelined schedules support): even and
// uneven hosts (extras folded in), 2 to 8 hosts (Rabenseifner's rails with and without
// hosts beyond a power of two), and ranks dealt round-robin over the hosts.
std::vector<std::shared_ptr<const Topology>> Topologies() {
  std::vector<std::shared_ptr<const Topology>> all;
  for (const std::vector<int>& per_host : std::vector<std::vector<int>>{{2, 2},
                                                                        {3, 3},
                                                                        {4, 4},
                                                                        {2, 2, 2},
                                                                        {3, 3, 3},
                                                                        {4, 4, 4, 4},
                                                                        {8, 8},
                                                                        {3, 2},
                                                                        {2, 4, 3},
                                                                        {7, 3, 5},
                                                                        {2, 3, 2, 3},
                                                                        {2, 2, 2, 2, 2},
                                                                        {2, 2, 2, 2, 2, 2, 2},
                                                                        {2, 2, 2, 2, 2, 2, 2, 2}}) {
    all.push_back(Contiguous(per_host));
  }
  for (const auto& [size, hosts] : std::vector<std::pair<int, int>>{{6, 2}, {9, 3}, {8, 4}}) {
    std::vector<std::string> ids;
    for (int r = 0; r < size; ++r) ids.push_back(fmt::format("host{}", r % hosts));
    all.push_back(std::make_shared<const Topology>(Topology::FromHostIds(ids)));
  }
  return all;
}

TEST(HierarchicalPipelined, MatchesReferenceForEverySegmentCount) {
  for (const char* name : kPipelined) {
    SCOPED_TRACE(name);
    const Algorithm& algorithm = Find(name);
    for (const auto& topology : Topologies()) {
      const int size = static_cast<int>(topology->host_of.size());
      for (size_t count :
           {size_t{0}, size_t{1}, size_t{7}, size_t(size + 1), size_t{100}, size_t{1009}}) {
        for (int segments : {1, 2, 3, 5, 8, 200}) {
          CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, count};
          spec.topology = topology;
          spec.segments = segments;
          ASSERT_TRUE(algorithm.supports(spec)) << topology->Describe();
          const Buffers inputs = MakeInputs(spec);
          for (bool in_place : {false, true}) {
            ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, inputs, Sum))
                << topology->Describe() << ", " << segments << " segments";
            ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, MakeScrambledInputs(spec), Min))
                << topology->Describe() << ", " << segments << " segments";
          }
        }
      }
    }
  }
}

// Eager sends (tcp's small messages) as well as rendezvous: the rounds shared by two
// segments must not deadlock either way.
TEST(HierarchicalPipelined, NoDeadlockWithEagerSends) {
  ReduceFn add = [](void* dst, const void* src, size_t count) {
    auto* d = static_cast<int64_t*>(dst);
    const auto* s = static_cast<const int64_t*>(src);
    for (size_t i = 0; i < count; ++i) d[i] += s[i];
  };
  for (const char* name : kPipelined) {
    for (const auto& topology : Topologies()) {
      const int size = static_cast<int>(topology->host_of.size());
      CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, 577};
      spec.topology = topology;
      spec.segments = 4;
      std::vector<std::vector<std::byte>> inputs(size, std::vector<std::byte>(577 * 8));
      for (int r = 0; r < size; ++r) {
        const std::vector<int64_t> v(577, r + 1);
        std::memcpy(inputs[r].data(), v.data(), inputs[r].size());
      }
      InterpretOptions options;
      options.rendezvous = false;
      auto out = Interpret(spec, BuildAllRanks(Find(name).build, spec), inputs, 8, add, options);
      ASSERT_TRUE(out.ok()) << name << " on " << topology->Describe() << ": "
                            << out.status().ToString();
      std::vector<int64_t> got(577);
      std::memcpy(got.data(), out.value()[size - 1].data(), got.size() * 8);
      EXPECT_EQ(got[576], int64_t{size} * (size + 1) / 2) << name << " on " << topology->Describe();
    }
  }
}

// What makes it a pipeline: with 4 segments on 4 hosts x 4 ranks, some round of every
// rank holds a message to its host and one to another host (one segment reduced inside
// the host while another crosses the rail), and no round holds two messages to other
// hosts (the stagger keeps segments off each other's rails). With one segment no round
// mixes the two.
TEST(HierarchicalPipelined, OverlapsHostAndRailStepsOfDifferentSegments) {
  const auto topology = Contiguous({4, 4, 4, 4});
  for (const char* name : kPipelined) {
    for (int segments : {1, 4}) {
      CollectiveSpec spec{Collective::kAllReduce, 0, 16, 0, 16 * 64};
      spec.topology = topology;
      spec.segments = segments;
      for (int r = 0; r < 16; ++r) {
        spec.rank = r;
        int mixed = 0;
        for (const Round& round : Find(name).build(spec).rounds) {
          int inside = 0, across = 0;
          for (const Step& step : round.steps) {
            if (step.kind != StepKind::kSend) continue;
            (topology->host_of[step.peer] == topology->host_of[r] ? inside : across)++;
          }
          EXPECT_LE(across, 1) << name << " rank " << r << ", " << segments << " segments";
          if (inside > 0 && across > 0) ++mixed;
        }
        if (segments == 1) {
          EXPECT_EQ(mixed, 0) << name << " rank " << r;
        } else {
          EXPECT_GT(mixed, 0) << name << " rank " << r;
        }
      }
    }
  }
}

TEST(HierarchicalPipelined, SupportsSeveralHostsOfSeveralRanksOnly) {
  for (const char* name : kPipelined) {
    for (const std::vector<int>& per_host :
         std::vector<std::vector<int>>{{4}, {1, 1}, {2, 1}, {1, 1, 1, 1}}) {
      CollectiveSpec spec{Collective::kAllReduce, 0, 0, 0, 100};
      for (int n : per_host) spec.size += n;
      spec.topology = Contiguous(per_host);
      EXPECT_FALSE(Find(name).supports(spec)) << name << " on " << spec.topology->Describe();
    }
    CollectiveSpec none{Collective::kAllReduce, 0, 4, 0, 100};
    EXPECT_FALSE(Find(name).supports(none)) << name << " without a topology";
  }
  for (Collective coll : {Collective::kAllGather, Collective::kReduceScatter}) {
    for (const std::vector<int>& per_host :
         std::vector<std::vector<int>>{{4}, {1, 1}, {3, 2}, {1, 1, 1, 1}}) {
      CollectiveSpec spec{coll, 0, 0, 0, 100};
      for (int n : per_host) spec.size += n;
      spec.topology = Contiguous(per_host);
      EXPECT_FALSE(FindAlgorithm(coll, "hierarchical_pipelined")->supports(spec))
          << CollectiveName(coll) << " on " << spec.topology->Describe();
    }
  }
}

// The allgather and reduce-scatter: equal hosts only.
TEST(HierarchicalPipelined, AllGatherAndReduceScatterMatchReference) {
  for (Collective coll : {Collective::kAllGather, Collective::kReduceScatter}) {
    const Algorithm* algorithm = FindAlgorithm(coll, "hierarchical_pipelined");
    ASSERT_NE(algorithm, nullptr) << CollectiveName(coll);
    for (const auto& topology : Topologies()) {
      const int size = static_cast<int>(topology->host_of.size());
      const auto hosts = topology->Hosts();
      bool uniform = true;
      for (const auto& h : hosts) uniform = uniform && h.size() == hosts[0].size();
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{100}}) {
        for (int segments : {1, 2, 3, 8, 200}) {
          CollectiveSpec spec{coll, 0, size, 0, count};
          spec.topology = topology;
          spec.segments = segments;
          ASSERT_EQ(algorithm->supports(spec), uniform) << topology->Describe();
          if (!uniform) continue;
          for (bool in_place : {false, true}) {
            ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, MakeInputs(spec), Sum))
                << topology->Describe() << ", " << segments << " segments";
          }
          auto eager = Interpret(
              spec, BuildAllRanks(algorithm->build, spec),
              std::vector<std::vector<std::byte>>(size,
                                                  std::vector<std::byte>(InputCount(spec) * 8)),
              8, [](void*, const void*, size_t) {}, InterpretOptions{false, false});
          ASSERT_TRUE(eager.ok()) << topology->Describe() << ": " << eager.status().ToString();
        }
      }
    }
  }
}

// The allgather's and reduce-scatter's overlap, as the allreduce's above.
TEST(HierarchicalPipelined, AllGatherAndReduceScatterOverlapTheirPhases) {
  const auto topology = Contiguous({4, 4, 4, 4});
  for (Collective coll : {Collective::kAllGather, Collective::kReduceScatter}) {
    const Algorithm* algorithm = FindAlgorithm(coll, "hierarchical_pipelined");
    for (int segments : {1, 4}) {
      CollectiveSpec spec{coll, 0, 16, 0, 64};
      spec.topology = topology;
      spec.segments = segments;
      for (int r = 0; r < 16; ++r) {
        spec.rank = r;
        int mixed = 0;
        for (const Round& round : algorithm->build(spec).rounds) {
          int inside = 0, across = 0;
          for (const Step& step : round.steps) {
            if (step.kind != StepKind::kSend) continue;
            (topology->host_of[step.peer] == topology->host_of[r] ? inside : across)++;
          }
          EXPECT_LE(across, 1) << CollectiveName(coll) << " rank " << r;
          if (inside > 0 && across > 0) ++mixed;
        }
        EXPECT_EQ(mixed > 0, segments > 1)
            << CollectiveName(coll) << " rank " << r << ", " << segments << " segments";
      }
    }
  }
}

PlanRequest Request(size_t bytes, std::shared_ptr<const Topology> topology) {
  CollectiveSpec spec{Collective::kAllReduce, 0, static_cast<int>(topology->host_of.size()), 0,
                      bytes / 4};
  spec.topology = std::move(topology);
  return PlanRequest{spec, 4};
}

// Where the hosts' links are about as fast as each rank's share of the network (NVLink
// against 8 NICs of 100 Gbit/s), the host phases are as long as the rail's and the
// planner takes the pipeline for large calls, with the segments its estimate chose (and
// says so); small calls stay in one piece.
TEST(PipelinedPlanner, ChosenWithItsSegmentsWhereHostAndRailPhasesAreAlike) {
  const CostModel costs = CostModel::Parse(
                              "intra_alpha_us=3,intra_gbps=1000,inter_alpha_us=15,inter_gbps=100,"
                              "inter_links=8")
                              .value();
  const Planner p = Planner::Create("", costs).value();
  const auto topology = Contiguous({8, 8, 8, 8});
  const auto large = p.Explain(Request(256 << 20, topology));
  ASSERT_TRUE(large.ok());
  const PlanChoice& choice = large.value();
  EXPECT_STREQ(choice.algorithm->name, "hierarchical_pipelined") << choice.reason;
  EXPECT_GT(choice.segments, 1) << choice.reason;
  EXPECT_NE(choice.reason.find(fmt::format("in {} segments", choice.segments)), std::string::npos)
      << choice.reason;
  EXPECT_EQ(choice.Planned(Request(256 << 20, topology).spec).segments, choice.segments);
  // The estimate is of the segments chosen, and beats the unpipelined schedule.
  const CollectiveSpec spec = Request(256 << 20, topology).spec;
  EXPECT_LT(EstimateUs("hierarchical_pipelined", spec, 4, costs),
            0.9 * EstimateUs("hierarchical", spec, 4, costs));
  // Forced, it still gets its segments.
  const Planner forced = Planner::Create("allreduce:hierarchical_pipelined", costs).value();
  EXPECT_EQ(forced.Explain(Request(256 << 20, topology)).value().segments, choice.segments);
  // 64 KiB: latencies dominate, one segment is the cheapest.
  const Algorithm& pipelined = Find("hierarchical_pipelined");
  EXPECT_EQ(pipelined.segments(CostQuery{*topology, (64 << 10) / 4, 4, 0}, costs), 1);
}

}  // namespace
}  // namespace weft::sched::testing
