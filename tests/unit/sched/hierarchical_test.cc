// The hierarchical allreduce on many topologies (hosts x ranks per host, even and
// uneven, contiguous and interleaved placement): every rank's schedule interpreted
// together, compared with the plain-loop reference, for many counts, in and out of place,
// with sum and min, rendezvous and eager sends; and bitwise agreement on doubles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "sched/interpreter.h"
#include "sched/registry.h"

namespace weft::sched::testing {
namespace {

const Algorithm& Hierarchical() {
  const Algorithm* a = FindAlgorithm(Collective::kAllReduce, "hierarchical");
  EXPECT_NE(a, nullptr);
  return *a;
}

std::shared_ptr<const Topology> Contiguous(const std::vector<int>& per_host) {
  return std::make_shared<const Topology>(Topology::Contiguous(per_host));
}

// Ranks dealt round-robin over `hosts` hosts (rank r on host r % hosts).
std::shared_ptr<const Topology> Interleaved(int size, int hosts) {
  std::vector<std::string> ids;
  for (int r = 0; r < size; ++r) ids.push_back(fmt::format("host{}", r % hosts));
  return std::make_shared<const Topology>(Topology::FromHostIds(ids));
}

std::vector<std::shared_ptr<const Topology>> Topologies() {
  std::vector<std::shared_ptr<const Topology>> all;
  for (const std::vector<int>& per_host : std::vector<std::vector<int>>{
           {1},       {2},       {5},          {1, 1},       {2, 2},      {3, 3},
           {4, 4},    {2, 2, 2}, {2, 2, 2, 2}, {3, 3, 3},    {8, 8},      {4, 4, 4, 4},
           {2, 1},    {1, 2},    {3, 1, 2},    {4, 2},       {2, 4, 3},   {5, 2},
           {1, 1, 3}, {7, 3, 5}, {6, 6, 1},    {2, 3, 2, 3}, {1, 1, 1, 1}}) {
    all.push_back(Contiguous(per_host));
  }
  all.push_back(Interleaved(6, 2));
  all.push_back(Interleaved(7, 3));
  all.push_back(Interleaved(8, 4));
  return all;
}

TEST(Topology, FromHostIdsNumbersHostsByLowestRank) {
  const Topology t = Topology::FromHostIds({"b", "a", "b", "c"});
  EXPECT_EQ(t.host_of, (std::vector<int>{0, 1, 0, 2}));
  EXPECT_EQ(t.NumHosts(), 3);
  EXPECT_EQ(t.Hosts(), (std::vector<std::vector<int>>{{0, 2}, {1}, {3}}));
  EXPECT_EQ(t.Describe(), "3 hosts, ranks per host 2,1,1");
  EXPECT_EQ(Topology::Contiguous({2, 2}).Describe(), "2 hosts x 2 ranks");
  EXPECT_EQ(Topology::Contiguous({2, 2}).host_of, (std::vector<int>{0, 0, 1, 1}));
}

TEST(HierarchicalAllReduce, MatchesReferenceOnManyTopologies) {
  const Algorithm& algorithm = Hierarchical();
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t(size - 1),
                         size_t(size), size_t(size + 1), size_t{13}, size_t{100}, size_t{1009}}) {
      CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, count};
      spec.topology = topology;
      ASSERT_TRUE(algorithm.supports(spec)) << topology->Describe();
      const Buffers inputs = MakeInputs(spec);
      for (bool in_place : {false, true}) {
        ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, inputs, Sum)) << topology->Describe();
        ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, MakeScrambledInputs(spec), Min))
            << topology->Describe();
      }
    }
  }
}

// Eager sends (the tcp transport's behaviour for small messages) as well as rendezvous.
TEST(HierarchicalAllReduce, NoDeadlockWithEagerSends) {
  const Algorithm& algorithm = Hierarchical();
  ReduceFn add = [](void* dst, const void* src, size_t count) {
    auto* d = static_cast<int64_t*>(dst);
    const auto* s = static_cast<const int64_t*>(src);
    for (size_t i = 0; i < count; ++i) d[i] += s[i];
  };
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, 57};
    spec.topology = topology;
    std::vector<std::vector<std::byte>> inputs(size, std::vector<std::byte>(57 * 8, std::byte{1}));
    InterpretOptions options;
    options.rendezvous = false;
    auto out = Interpret(spec, BuildAllRanks(algorithm.build, spec), inputs, 8, add, options);
    ASSERT_TRUE(out.ok()) << topology->Describe() << ": " << out.status().ToString();
  }
}

// Every rank must end with identical bytes even where float addition is not associative.
TEST(HierarchicalAllReduce, RanksAgreeBitwiseOnDoubles) {
  const Algorithm& algorithm = Hierarchical();
  ReduceFn add = [](void* dst, const void* src, size_t count) {
    auto* d = static_cast<double*>(dst);
    const auto* s = static_cast<const double*>(src);
    for (size_t i = 0; i < count; ++i) d[i] += s[i];
  };
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, 257};
    spec.topology = topology;
    std::vector<std::vector<std::byte>> inputs(size);
    for (int r = 0; r < size; ++r) {
      std::vector<double> v(spec.count);
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = ((r * 37 + i * 11) % 17 - 8.0) * std::pow(10.0, double((r + i) % 17) - 8.0) + 0.1;
      }
      inputs[r].resize(v.size() * sizeof(double));
      std::memcpy(inputs[r].data(), v.data(), inputs[r].size());
    }
    auto out = Interpret(spec, BuildAllRanks(algorithm.build, spec), inputs, sizeof(double), add);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    for (int r = 1; r < size; ++r) {
      EXPECT_EQ(out.value()[r], out.value()[0]) << topology->Describe() << ": rank " << r;
    }
  }
}

// The shape: on 2 hosts x 2 ranks each rank sends one message to the other host per
// inter-host ring step (2 steps), each a quarter of the buffer.
TEST(HierarchicalAllReduce, InterHostTrafficIsOneRingPerRail) {
  CollectiveSpec spec{Collective::kAllReduce, 0, 4, 0, 400};
  spec.topology = Contiguous({2, 2});
  for (int r = 0; r < 4; ++r) {
    spec.rank = r;
    const Schedule s = Hierarchical().build(spec);
    int inter = 0;
    for (const Round& round : s.rounds) {
      for (const Step& step : round.steps) {
        if (step.kind != StepKind::kSend) continue;
        if (spec.topology->host_of[step.peer] != spec.topology->host_of[r]) {
          ++inter;
          EXPECT_EQ(step.src.count, 100u);
          EXPECT_EQ(step.peer, (r + 2) % 4);  // same local index on the other host
        }
      }
    }
    EXPECT_EQ(inter, 2) << "rank " << r;
  }
}

TEST(HierarchicalAllReduce, NeedsTopology) {
  CollectiveSpec spec{Collective::kAllReduce, 0, 4, 0, 10};
  EXPECT_FALSE(Hierarchical().supports(spec));
  spec.topology = Contiguous({2, 1});  // 3 ranks, world of 4
  EXPECT_FALSE(Hierarchical().supports(spec));
  spec.topology = Contiguous({2, 2});
  EXPECT_TRUE(Hierarchical().supports(spec));
}

TEST(HierarchicalAllGather, MatchesReferenceOnUniformTopologies) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kAllGather, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{100}}) {
      CollectiveSpec spec{Collective::kAllGather, 0, size, 0, count};
      spec.topology = topology;
      const auto hosts = topology->Hosts();
      bool uniform = true;
      for (const auto& h : hosts) uniform = uniform && h.size() == hosts[0].size();
      ASSERT_EQ(algorithm->supports(spec), uniform) << topology->Describe();
      if (!uniform) continue;
      for (bool in_place : {false, true}) {
        ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, MakeInputs(spec), Sum))
            << topology->Describe();
      }
      auto eager = Interpret(
          spec, BuildAllRanks(algorithm->build, spec),
          std::vector<std::vector<std::byte>>(size, std::vector<std::byte>(count * 8)), 8,
          [](void*, const void*, size_t) {}, InterpretOptions{false, false});
      ASSERT_TRUE(eager.ok()) << topology->Describe() << ": " << eager.status().ToString();
    }
  }
}

}  // namespace
}  // namespace weft::sched::testing
