// The hierarchical allreduce on many topologies (hosts x ranks per host, even and
// uneven, contiguous and interleaved placement): every rank's schedule interpreted
// together, compared with the plain-loop reference, for many counts, in and out of place,
// with sum and min, rendezvous and eager sends; and bitwise agreement on doubles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness.h"
#include "interpreter.h"
#include "sched/registry.h"

namespace weft::sched::testing {
namespace {

const Algorithm& Hierarchical(const char* name = "hierarchical") {
  const Algorithm* a = FindAlgorithm(Collective::kAllReduce, name);
  EXPECT_NE(a, nullptr) << name;
  return *a;
}

// Both rail exchanges: the ring, and recursive halving/doubling between hosts.
const std::vector<const char*> kHierarchicalAllReduces = {"hierarchical",
                                                          "hierarchical_rabenseifner"};

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
           {1},
           {2},
           {5},
           {1, 1},
           {2, 2},
           {3, 3},
           {4, 4},
           {2, 2, 2},
           {2, 2, 2, 2},
           {3, 3, 3},
           {8, 8},
           {4, 4, 4, 4},
           {2, 1},
           {1, 2},
           {3, 1, 2},
           {4, 2},
           {2, 4, 3},
           {5, 2},
           {1, 1, 3},
           {7, 3, 5},
           {6, 6, 1},
           {2, 3, 2, 3},
           {1, 1, 1, 1},
           // 5 to 8 hosts: rails with hosts beyond a power of two (folded) and without.
           {1, 1, 1, 1, 1},
           {2, 2, 2, 2, 2},
           {2, 2, 2, 2, 2, 2, 2},
           {2, 1, 2, 2, 2, 2},
           {2, 2, 2, 2, 2, 2, 2, 2}}) {
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
  for (const char* name : kHierarchicalAllReduces) {
    SCOPED_TRACE(name);
    const Algorithm& algorithm = Hierarchical(name);
    for (const auto& topology : Topologies()) {
      const int size = static_cast<int>(topology->host_of.size());
      for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t(size - 1),
                           size_t(size), size_t(size + 1), size_t{13}, size_t{100}, size_t{1009}}) {
        CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, count};
        spec.topology = topology;
        ASSERT_TRUE(algorithm.supports(spec)) << topology->Describe();
        const Buffers inputs = MakeInputs(spec);
        for (bool in_place : {false, true}) {
          ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, inputs, Sum))
              << topology->Describe();
          ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, MakeScrambledInputs(spec), Min))
              << topology->Describe();
        }
      }
    }
  }
}

// Eager sends (the tcp transport's behaviour for small messages) as well as rendezvous.
TEST(HierarchicalAllReduce, NoDeadlockWithEagerSends) {
  for (const char* name : kHierarchicalAllReduces) {
    SCOPED_TRACE(name);
    const Algorithm& algorithm = Hierarchical(name);
    ReduceFn add = [](void* dst, const void* src, size_t count) {
      auto* d = static_cast<int64_t*>(dst);
      const auto* s = static_cast<const int64_t*>(src);
      for (size_t i = 0; i < count; ++i) d[i] += s[i];
    };
    for (const auto& topology : Topologies()) {
      const int size = static_cast<int>(topology->host_of.size());
      CollectiveSpec spec{Collective::kAllReduce, 0, size, 0, 57};
      spec.topology = topology;
      std::vector<std::vector<std::byte>> inputs(size,
                                                 std::vector<std::byte>(57 * 8, std::byte{1}));
      InterpretOptions options;
      options.rendezvous = false;
      auto out = Interpret(spec, BuildAllRanks(algorithm.build, spec), inputs, 8, add, options);
      ASSERT_TRUE(out.ok()) << topology->Describe() << ": " << out.status().ToString();
    }
  }
}

// Every rank must end with identical bytes even where float addition is not associative.
TEST(HierarchicalAllReduce, RanksAgreeBitwiseOnDoubles) {
  for (const char* name : kHierarchicalAllReduces) {
    SCOPED_TRACE(name);
    const Algorithm& algorithm = Hierarchical(name);
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

// Across 8 hosts x 2 ranks the Rabenseifner rails take 6 inter-host steps per rank (lg 8
// halving, lg 8 doubling) to the same local index on hosts at xor distances 4, 2, 1, 1, 2,
// 4, sending 1/2, 1/4, 1/8 of the rank's chunk and back; the ring rails take 14 of 1/8.
TEST(HierarchicalAllReduce, RabenseifnerRailsExchangeAtXorDistances) {
  CollectiveSpec spec{Collective::kAllReduce, 0, 16, 0, 1600};
  spec.topology = Contiguous(std::vector<int>(8, 2));
  for (int r = 0; r < 16; ++r) {
    spec.rank = r;
    std::vector<int> distance;
    std::vector<size_t> counts;
    for (const Round& round : Hierarchical("hierarchical_rabenseifner").build(spec).rounds) {
      for (const Step& step : round.steps) {
        if (step.kind != StepKind::kSend) continue;
        if (spec.topology->host_of[step.peer] == spec.topology->host_of[r]) continue;
        EXPECT_EQ(step.peer % 2, r % 2) << "rank " << r;  // along its rail
        distance.push_back(spec.topology->host_of[step.peer] ^ spec.topology->host_of[r]);
        counts.push_back(step.src.count);
      }
    }
    EXPECT_EQ(distance, (std::vector<int>{4, 2, 1, 1, 2, 4})) << "rank " << r;
    EXPECT_EQ(counts, (std::vector<size_t>{400, 200, 100, 100, 200, 400})) << "rank " << r;
    int ring_inter = 0;
    for (const Round& round : Hierarchical().build(spec).rounds) {
      for (const Step& step : round.steps) {
        ring_inter += step.kind == StepKind::kSend &&
                      spec.topology->host_of[step.peer] != spec.topology->host_of[r];
      }
    }
    EXPECT_EQ(ring_inter, 14) << "rank " << r;
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
  for (const char* name : {"hierarchical", "hierarchical_doubling"}) {
  SCOPED_TRACE(name);
  const Algorithm* algorithm = FindAlgorithm(Collective::kAllGather, name);
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
}

// Across 8 hosts x 2 ranks the doubling rails take 3 inter-host steps per rank, to the
// same local index on hosts at xor distances 1, 2, 4 with 1, 2 and 4 blocks; the ring
// rails take 7 steps of one block. Across 6 hosts (4 + 2 folded) host 5 sends its block
// to host 1 and gets the other 5 back, and host 0's first doubling step carries its
// folded host's block with its own.
TEST(HierarchicalAllGather, DoublingRailsExchangeAtXorDistances) {
  const Algorithm* doubling = FindAlgorithm(Collective::kAllGather, "hierarchical_doubling");
  ASSERT_NE(doubling, nullptr);
  // Per round, the inter-host peers' host distances (xor) and the blocks sent to them.
  auto inter_rounds = [](const CollectiveSpec& spec, const Schedule& s) {
    std::vector<std::pair<int, int>> rounds;  // (host xor, sends)
    const auto& host_of = spec.topology->host_of;
    for (const Round& round : s.rounds) {
      int peer_host = -1, sends = 0;
      for (const Step& step : round.steps) {
        if (step.kind != StepKind::kSend || host_of[step.peer] == host_of[spec.rank]) continue;
        EXPECT_EQ(step.peer % 2, spec.rank % 2) << "along its rail";
        EXPECT_EQ(step.src.count, 10u);
        peer_host = host_of[step.peer];
        ++sends;
      }
      if (sends > 0) rounds.emplace_back(peer_host ^ host_of[spec.rank], sends);
    }
    return rounds;
  };
  CollectiveSpec spec{Collective::kAllGather, 0, 16, 0, 10};
  spec.topology = Contiguous(std::vector<int>(8, 2));
  for (int r = 0; r < 16; ++r) {
    spec.rank = r;
    EXPECT_EQ(inter_rounds(spec, doubling->build(spec)),
              (std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {4, 4}}))
        << "rank " << r;
  }
  spec.topology = Contiguous(std::vector<int>(6, 2));
  spec.size = 12;
  spec.rank = 10;  // host 5, folded into host 1
  EXPECT_EQ(inter_rounds(spec, doubling->build(spec)),
            (std::vector<std::pair<int, int>>{{5 ^ 1, 1}}));
  spec.rank = 2;  // host 1: receives host 5's block, doubles, sends host 5 the other five
  EXPECT_EQ(inter_rounds(spec, doubling->build(spec)),
            (std::vector<std::pair<int, int>>{{1 ^ 0, 2}, {1 ^ 3, 4}, {1 ^ 5, 5}}));
}

// The counts of algorithms_test plus, on small hosts, one whose per-rail chunk is long
// enough for the broadcast's pipelined inter-host chain (>= 16384 elements per rail).
std::vector<size_t> Counts(int size, bool with_chain) {
  std::set<size_t> counts = {0, 1, 2, size_t(size - 1), size_t(size), 7, 13, 1009, 4099};
  if (with_chain) counts.insert(2 * 16384 + 5);
  return {counts.begin(), counts.end()};
}

bool IsUniform(const Topology& t) {
  const auto hosts = t.Hosts();
  for (const auto& h : hosts) {
    if (h.size() != hosts[0].size()) return false;
  }
  return true;
}

TEST(HierarchicalBroadcast, MatchesReferenceForEveryRoot) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kBroadcast, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    for (size_t count : Counts(size, size <= 8)) {
      for (int root = 0; root < size; ++root) {
        CollectiveSpec spec{Collective::kBroadcast, 0, size, root, count};
        spec.topology = topology;
        ASSERT_TRUE(algorithm->supports(spec)) << topology->Describe();
        const Buffers inputs = MakeInputs(spec);
        for (bool in_place : {false, true}) {
          ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, inputs, Sum))
              << topology->Describe();
        }
      }
    }
  }
}

TEST(HierarchicalBroadcast, NoDeadlockWithEagerSendsAndFlatWithoutTopology) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kBroadcast, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    for (size_t count : {size_t{57}, size_t{2 * 16384 + 5}}) {
      CollectiveSpec spec{Collective::kBroadcast, 0, size, size - 1, count};
      spec.topology = topology;
      std::vector<std::vector<std::byte>> inputs(size);
      for (int r = 0; r < size; ++r) {
        CollectiveSpec as_rank = spec;
        as_rank.rank = r;
        inputs[r].resize(InputCount(as_rank) * 8);
      }
      auto eager = Interpret(
          spec, BuildAllRanks(algorithm->build, spec), inputs, 8, [](void*, const void*, size_t) {},
          InterpretOptions{false, false});
      ASSERT_TRUE(eager.ok()) << topology->Describe() << ": " << eager.status().ToString();
    }
  }
  // Built without a topology (a caller that skips supports()): every rank its own host.
  CollectiveSpec spec{Collective::kBroadcast, 0, 5, 3, 100};
  EXPECT_FALSE(algorithm->supports(spec));
  EXPECT_TRUE(RunAndCompare(*algorithm, spec, false, MakeInputs(spec), Sum));
}

// The shape on 2 hosts x 4 ranks: exactly one message per rail crosses hosts, a quarter
// of the buffer each, from the root's host to the same local index on the other host.
TEST(HierarchicalBroadcast, InterHostTrafficIsOneChunkPerRail) {
  for (int root : {0, 6}) {
    CollectiveSpec spec{Collective::kBroadcast, 0, 8, root, 400};
    spec.topology = Contiguous({4, 4});
    int inter = 0;
    for (int r = 0; r < 8; ++r) {
      spec.rank = r;
      for (const Round& round :
           FindAlgorithm(Collective::kBroadcast, "hierarchical")->build(spec).rounds) {
        for (const Step& step : round.steps) {
          if (step.kind != StepKind::kSend) continue;
          if (spec.topology->host_of[step.peer] == spec.topology->host_of[r]) continue;
          ++inter;
          EXPECT_EQ(step.src.count, 100u);
          EXPECT_EQ(step.peer, (r + 4) % 8);
          EXPECT_EQ(spec.topology->host_of[r], spec.topology->host_of[root]);
        }
      }
    }
    EXPECT_EQ(inter, 4) << "root " << root;
  }
}

// int64 under sum, min, max and xor; several counts; in and out of place.
TEST(HierarchicalReduceScatter, MatchesReferenceOnUniformTopologies) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kReduceScatter, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  const Op max = [](int64_t a, int64_t b) { return a > b ? a : b; };
  const Op bxor = [](int64_t a, int64_t b) { return a ^ b; };
  for (const auto& topology : Topologies()) {
    const int size = static_cast<int>(topology->host_of.size());
    for (size_t count : Counts(size, false)) {
      CollectiveSpec spec{Collective::kReduceScatter, 0, size, 0, count};
      spec.topology = topology;
      ASSERT_EQ(algorithm->supports(spec), IsUniform(*topology)) << topology->Describe();
      const Buffers inputs = MakeInputs(spec);
      const Buffers scrambled = MakeScrambledInputs(spec);
      for (bool in_place : {false, true}) {
        // Uneven hosts too: a forced build there must still be correct (the flat ring).
        ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, inputs, Sum)) << topology->Describe();
        ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, scrambled, Min))
            << topology->Describe();
        ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, scrambled, max))
            << topology->Describe();
        ASSERT_TRUE(RunAndCompare(*algorithm, spec, in_place, inputs, bxor))
            << topology->Describe();
      }
    }
  }
}

// float32 (another element size: the interpreter's offsets are in elements) with small
// integers, so every summation order gives the exact reference; eager sends.
TEST(HierarchicalReduceScatter, Float32AndEagerSends) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kReduceScatter, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  ReduceFn add = [](void* dst, const void* src, size_t count) {
    auto* d = static_cast<float*>(dst);
    const auto* s = static_cast<const float*>(src);
    for (size_t i = 0; i < count; ++i) d[i] += s[i];
  };
  for (const auto& topology : Topologies()) {
    if (!IsUniform(*topology)) continue;
    const int size = static_cast<int>(topology->host_of.size());
    const size_t count = 13;
    CollectiveSpec spec{Collective::kReduceScatter, 0, size, 0, count};
    spec.topology = topology;
    std::vector<std::vector<std::byte>> inputs(size);
    for (int r = 0; r < size; ++r) {
      std::vector<float> v(size * count);
      for (size_t i = 0; i < v.size(); ++i) v[i] = float((r * 7 + i * 3) % 11) - 5.0f;
      inputs[r].resize(v.size() * sizeof(float));
      std::memcpy(inputs[r].data(), v.data(), inputs[r].size());
    }
    for (bool rendezvous : {true, false}) {
      InterpretOptions options;
      options.rendezvous = rendezvous;
      auto out = Interpret(spec, BuildAllRanks(algorithm->build, spec), inputs, sizeof(float), add,
                           options);
      ASSERT_TRUE(out.ok()) << topology->Describe() << ": " << out.status().ToString();
      for (int r = 0; r < size; ++r) {
        std::vector<float> got(count);
        std::memcpy(got.data(), out.value()[r].data(), count * sizeof(float));
        for (size_t i = 0; i < count; ++i) {
          float want = 0;
          for (int q = 0; q < size; ++q) want += float((q * 7 + (r * count + i) * 3) % 11) - 5.0f;
          ASSERT_EQ(got[i], want) << topology->Describe() << " rank " << r << " element " << i;
        }
      }
    }
  }
}

// The shape on 2 hosts x 2 ranks: each rank sends exactly one block across hosts, to the
// same local index on the other host.
TEST(HierarchicalReduceScatter, InterHostTrafficIsOneBlockPerRank) {
  const Algorithm* algorithm = FindAlgorithm(Collective::kReduceScatter, "hierarchical");
  ASSERT_NE(algorithm, nullptr);
  CollectiveSpec spec{Collective::kReduceScatter, 0, 4, 0, 100};
  spec.topology = Contiguous({2, 2});
  for (int r = 0; r < 4; ++r) {
    spec.rank = r;
    int inter = 0;
    for (const Round& round : algorithm->build(spec).rounds) {
      for (const Step& step : round.steps) {
        if (step.kind != StepKind::kSend) continue;
        if (spec.topology->host_of[step.peer] == spec.topology->host_of[r]) continue;
        ++inter;
        EXPECT_EQ(step.src.count, 100u);
        EXPECT_EQ(step.peer, (r + 2) % 4);
      }
    }
    EXPECT_EQ(inter, 1) << "rank " << r;
  }
}

}  // namespace
}  // namespace weft::sched::testing
