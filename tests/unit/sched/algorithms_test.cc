// Every registered algorithm (taken from the registry, not listed here) on every world
// size 1..64 it supports, for several counts, roots and both in-place modes, with a sum
// over int64 inputs, compared with a reference computed by plain loops. Algorithms that
// run only on registered buffers (CollectiveSpec::registered) get registered specs, and
// the interpreter checks their accesses to the peers' buffers too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "harness.h"
#include "interpreter.h"
#include "sched/registry.h"

namespace weft::sched::testing {
namespace {

constexpr int kMaxWorld = 64;
constexpr size_t kLargeCount = 1009;  // counts from here on get fewer roots
// Large counts are skipped where all ranks' buffers together exceed this many elements
// (alltoall, allgather, reducescatter, gather and scatter grow as size^2 · count): block
// arithmetic does not change with the count, and the small odd counts still run on every
// world size. Keeps the binary within about a minute on two cores.
constexpr size_t kMaxTotalElements = size_t{4} << 20;

size_t TotalElements(const CollectiveSpec& spec) {
  size_t total = 0;
  for (int r = 0; r < spec.size; ++r) {
    CollectiveSpec s = spec;
    s.rank = r;
    total += InputCount(s) + OutputCount(s);
  }
  return total;
}

bool IsRooted(Collective c) {
  return c == Collective::kReduce || c == Collective::kBroadcast || c == Collective::kGather ||
         c == Collective::kScatter;
}

std::vector<size_t> Counts(Collective coll, int size) {
  if (coll == Collective::kBarrier) return {0};
  std::set<size_t> counts = {0, 1, 2, size_t(size - 1), size_t(size), 7, 13, 1009, 4099};
  return {counts.begin(), counts.end()};
}

// All roots for small worlds and counts; otherwise the first, second, middle and last.
std::vector<int> Roots(Collective coll, int size, size_t count) {
  if (!IsRooted(coll)) return {0};
  std::vector<int> roots;
  if (size <= 16 && count < kLargeCount) {
    for (int r = 0; r < size; ++r) roots.push_back(r);
    return roots;
  }
  std::set<int> sample = {0, std::min(1, size - 1), size / 2, size - 1};
  return {sample.begin(), sample.end()};
}

// The spec for `algorithm`: registered when it supports only registered buffers, and
// with every call out of place when it needs that too (all-to-all's single pass).
CollectiveSpec SpecFor(const Algorithm& algorithm, int size, int root, size_t count) {
  CollectiveSpec spec{algorithm.coll, 0, size, root, count};
  if (!algorithm.supports(spec)) {
    spec.registered = true;
    if (!algorithm.supports(spec)) spec.may_be_in_place = false;
    if (!algorithm.supports(spec)) spec = CollectiveSpec{algorithm.coll, 0, size, root, count};
  }
  return spec;
}

// In place and out of place, or out of place only where the spec says no call is in place.
std::vector<bool> InPlaceModes(const CollectiveSpec& spec) {
  if (!spec.may_be_in_place) return {false};
  return {false, true};
}

struct SweepParam {
  int algorithm;  // index into AllAlgorithms()
  int size;
};

std::vector<SweepParam> SweepParams() {
  std::vector<SweepParam> params;
  const auto& all = AllAlgorithms();
  for (int a = 0; a < static_cast<int>(all.size()); ++a) {
    for (int size = 1; size <= kMaxWorld; ++size) {
      const CollectiveSpec spec = SpecFor(all[a], size, 0, 1);
      if (all[a].supports(spec)) params.push_back({a, size});
    }
  }
  return params;
}

class AlgorithmSweep : public ::testing::TestWithParam<SweepParam> {};

TEST_P(AlgorithmSweep, MatchesReference) {
  const Algorithm& algorithm = AllAlgorithms()[GetParam().algorithm];
  const int size = GetParam().size;
  for (size_t count : Counts(algorithm.coll, size)) {
    for (int root : Roots(algorithm.coll, size, count)) {
      const CollectiveSpec spec = SpecFor(algorithm, size, root, count);
      if (!algorithm.supports(spec)) continue;
      if (count >= kLargeCount && TotalElements(spec) > kMaxTotalElements) continue;
      const Buffers inputs = MakeInputs(spec);
      for (bool in_place : InPlaceModes(spec)) {
        ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, inputs, Sum));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, AlgorithmSweep, ::testing::ValuesIn(SweepParams()),
                         [](const ::testing::TestParamInfo<SweepParam>& info) {
                           const Algorithm& a = AllAlgorithms()[info.param.algorithm];
                           return fmt::format("{}_{}_size{}", CollectiveName(a.coll), a.name,
                                              info.param.size);
                         });

// All-to-all's single pass runs only when no rank's call is in place, because in place a
// rank overwrites blocks of its input that a peer is still reading: the interpreter, given
// the in-place form anyway, must catch it (and so shows that the restriction is needed).
TEST(AlgorithmAllToAllSinglePass, InPlaceIsARaceTheInterpreterCatches) {
  const Algorithm* single = FindAlgorithm(Collective::kAllToAll, "single_pass");
  ASSERT_NE(single, nullptr);
  CollectiveSpec spec{Collective::kAllToAll, 0, 3, 0, 5};
  spec.registered = true;
  EXPECT_FALSE(single->supports(spec)) << "some call may be in place";
  spec.may_be_in_place = false;
  ASSERT_TRUE(single->supports(spec));
  EXPECT_TRUE(RunAndCompare(*single, spec, /*in_place=*/false, MakeInputs(spec), Sum));
  EXPECT_FALSE(RunAndCompare(*single, spec, /*in_place=*/true, MakeInputs(spec), Sum));
}

// Min is not invertible, so a schedule that reduces a rank's data twice or misses a
// rank shows up differently than with sum; the scrambled inputs put each element's
// minimum on a different rank.
TEST(AlgorithmMin, ReductionsWithMin) {
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll != Collective::kAllReduce && algorithm.coll != Collective::kReduce &&
        algorithm.coll != Collective::kReduceScatter) {
      continue;
    }
    for (int size : {1, 2, 3, 5, 8, 13, 31, 64}) {
      for (size_t count : {size_t{1}, size_t{13}, size_t{100}}) {
        const CollectiveSpec spec = SpecFor(algorithm, size, size / 3, count);
        if (!algorithm.supports(spec)) continue;
        for (bool in_place : InPlaceModes(spec)) {
          ASSERT_TRUE(RunAndCompare(algorithm, spec, in_place, MakeScrambledInputs(spec), Min));
        }
      }
    }
  }
}

// Floating-point sums depend on the order of operations; every allreduce in the registry
// has all ranks end with identical bytes (ring: each chunk is reduced by one rank only;
// recursive doubling: partners add the same two operands; binomial: one rank reduces).
TEST(AlgorithmDeterminism, AllReduceRanksAgreeBitwiseOnDoubles) {
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll != Collective::kAllReduce) continue;
    for (int size : {3, 6, 7, 12, 33}) {
      const CollectiveSpec spec = SpecFor(algorithm, size, 0, 257);
      if (!algorithm.supports(spec)) continue;  // hierarchical: see hierarchical_test.cc
      std::vector<std::vector<std::byte>> inputs(size);
      for (int r = 0; r < size; ++r) {
        std::vector<double> v(spec.count);
        // Magnitudes from 1e-8 to 1e8 make the rounding depend on the summation order.
        for (size_t i = 0; i < v.size(); ++i) {
          v[i] = ((r * 37 + i * 11) % 17 - 8) * std::pow(10.0, double((r + i) % 17) - 8.0) + 0.1;
        }
        inputs[r].resize(v.size() * sizeof(double));
        std::memcpy(inputs[r].data(), v.data(), inputs[r].size());
      }
      ReduceFn add = [](void* dst, const void* src, size_t count) {
        auto* d = static_cast<double*>(dst);
        const auto* s = static_cast<const double*>(src);
        for (size_t i = 0; i < count; ++i) d[i] += s[i];
      };
      auto out = Interpret(spec, BuildAllRanks(algorithm.build, spec), inputs, sizeof(double), add);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      for (int r = 1; r < size; ++r) {
        EXPECT_EQ(out.value()[r], out.value()[0])
            << algorithm.name << " size " << size << ": rank " << r << " differs from rank 0";
      }
    }
  }
}

// A barrier moves no data, so check what it is for: after its last round every rank has
// (transitively) heard from every other rank. Knowledge flows along messages round by
// round; the dissemination schedule is lockstep, so round k of every rank runs together.
TEST(AlgorithmBarrier, EveryRankHearsFromEveryRank) {
  for (const Algorithm& algorithm : AllAlgorithms()) {
    if (algorithm.coll != Collective::kBarrier) continue;
    for (int size = 1; size <= kMaxWorld; ++size) {
      const CollectiveSpec spec{algorithm.coll, 0, size, 0, 0};
      const std::vector<Schedule> schedules = BuildAllRanks(algorithm.build, spec);
      std::vector<std::vector<bool>> heard(size, std::vector<bool>(size, false));
      for (int r = 0; r < size; ++r) heard[r][r] = true;
      size_t rounds = 0;
      for (const Schedule& s : schedules) rounds = std::max(rounds, s.rounds.size());
      for (size_t k = 0; k < rounds; ++k) {
        auto next = heard;
        for (int r = 0; r < size; ++r) {
          if (k >= schedules[r].rounds.size()) continue;
          for (const Step& step : schedules[r].rounds[k].steps) {
            if (step.kind != StepKind::kRecv) continue;
            for (int q = 0; q < size; ++q) next[r][q] = next[r][q] || heard[step.peer][q];
          }
        }
        heard = next;
      }
      for (int r = 0; r < size; ++r) {
        for (int q = 0; q < size; ++q) {
          ASSERT_TRUE(heard[r][q]) << algorithm.name << " size " << size << ": rank " << r
                                   << " may leave before rank " << q << " arrives";
        }
      }
      // ceil(lg size) rounds.
      size_t expected = 0;
      while ((size_t{1} << expected) < static_cast<size_t>(size)) ++expected;
      EXPECT_EQ(rounds, expected) << algorithm.name << " size " << size;
      auto run = Interpret(spec, schedules, std::vector<std::vector<std::byte>>(size), 1,
                           [](void*, const void*, size_t) {});
      EXPECT_TRUE(run.ok()) << run.status().ToString();
    }
  }
}

}  // namespace
}  // namespace weft::sched::testing
