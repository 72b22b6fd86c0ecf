// Every algorithm's closed-form estimate (Algorithm::estimate_us) against the cost of the
// schedules its builder emits, walked step by step with the cost model's own primitives,
// so that a builder and the estimate next to it cannot drift apart unnoticed.
//
// The walk (WalkUs) runs every rank's schedule in lock-step waves under the executor's
// rules: a message moves once its send and its receive (matched in FIFO order per pair of
// ranks) are both in their ranks' current rounds, and a round ends when all of its
// messages have moved. Each wave costs what MessagesUs charges for it, messages between
// one pair of ranks merged into one of their summed bytes (their handling latencies still
// counted, as MessagesUs counts them), the largest message inside hosts and the largest
// between them setting the intra and inter times.
//
// Where an estimate takes the same steps as its schedule the two agree to rounding. Where
// it is a deliberate approximation, ExpectedFor() below says why, and the two must still
// agree within a factor of two either way: enough to catch a step lost or doubled. Counts are
// multiples of 840 (which every world size up to 8 divides) times powers of two, so that chunks and
// segments are equal, as the estimates take them (bytes / p); and never 0, where the builders drop
// every message but most estimates still charge latencies.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/cost_model.h"
#include "interpreter.h"
#include "sched/registry.h"

namespace weft::sched {
namespace {

struct Message {
  int from, to;
  double bytes;
};

// Messages beyond one send and one receive at the busiest rank (as MessagesUs counts).
int ExtraMessages(int p, const std::vector<std::pair<int, int>>& messages) {
  std::vector<int> sends(p, 0), recvs(p, 0);
  for (const auto& [from, to] : messages) ++sends[from], ++recvs[to];
  int extra = 0;
  for (int r = 0; r < p; ++r) {
    extra = std::max(extra, std::max(0, sends[r] - 1) + std::max(0, recvs[r] - 1));
  }
  return extra;
}

// MessagesUs without the handling latencies.
double TransferUs(const Topology& t, const std::vector<std::pair<int, int>>& pairs, double bytes,
                  const CostModel& c) {
  if (pairs.empty()) return 0;
  const int p = static_cast<int>(t.host_of.size());
  return MessagesUs(t, pairs, bytes, c) - ExtraMessages(p, pairs) * c.intra_alpha_us;
}

// One wave: for messages of one size, exactly MessagesUs.
double WaveUs(const Topology& t, const std::vector<Message>& wave, const CostModel& c) {
  const int p = static_cast<int>(t.host_of.size());
  std::map<std::pair<int, int>, double> merged;
  std::vector<std::pair<int, int>> all;
  for (const Message& m : wave) {
    merged[{m.from, m.to}] += m.bytes;
    all.emplace_back(m.from, m.to);
  }
  std::vector<std::pair<int, int>> intra, inter;
  double intra_bytes = 0, inter_bytes = 0;
  for (const auto& [pair, bytes] : merged) {
    const bool same_host = t.host_of[pair.first] == t.host_of[pair.second];
    (same_host ? intra : inter).push_back(pair);
    double& largest = same_host ? intra_bytes : inter_bytes;
    largest = std::max(largest, bytes);
  }
  return std::max(TransferUs(t, intra, intra_bytes, c), TransferUs(t, inter, inter_bytes, c)) +
         ExtraMessages(p, all) * c.intra_alpha_us;
}

// Every message of the schedules, with the rounds it occupies at its two ends.
struct Pending {
  int from, to, send_round, recv_round;
  double bytes;
  bool moved = false;
};

std::vector<Pending> MatchMessages(const std::vector<Schedule>& schedules, size_t elem) {
  const int p = static_cast<int>(schedules.size());
  std::map<std::pair<int, int>, std::vector<int>> recv_rounds;  // (from, to) -> rounds at `to`
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < schedules[r].rounds.size(); ++k) {
      for (const Step& s : schedules[r].rounds[k].steps) {
        if (s.kind == StepKind::kRecv) recv_rounds[{s.peer, r}].push_back(static_cast<int>(k));
      }
    }
  }
  std::map<std::pair<int, int>, size_t> matched;
  std::vector<Pending> messages;
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < schedules[r].rounds.size(); ++k) {
      for (const Step& s : schedules[r].rounds[k].steps) {
        if (s.kind != StepKind::kSend) continue;
        const std::vector<int>& rounds = recv_rounds[{r, s.peer}];
        const size_t i = matched[{r, s.peer}]++;
        EXPECT_LT(i, rounds.size()) << "send " << r << " -> " << s.peer << " has no receive";
        if (i >= rounds.size()) return {};
        messages.push_back(
            {r, s.peer, static_cast<int>(k), rounds[i], double(s.src.count) * double(elem)});
      }
    }
  }
  return messages;
}

// The walk described at the top of the file; -1 (and a test failure) on a deadlock.
double WalkUs(const Topology& t, const std::vector<Schedule>& schedules, size_t elem,
              const CostModel& c) {
  const int p = static_cast<int>(schedules.size());
  std::vector<Pending> messages = MatchMessages(schedules, elem);
  // Per rank and round: the messages it sends there, and how many of its messages are left.
  std::vector<std::vector<std::vector<size_t>>> sends(p);
  std::vector<std::vector<int>> open(p);
  for (int r = 0; r < p; ++r) {
    sends[r].resize(schedules[r].rounds.size());
    open[r].assign(schedules[r].rounds.size(), 0);
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    sends[messages[i].from][messages[i].send_round].push_back(i);
    ++open[messages[i].from][messages[i].send_round];
    ++open[messages[i].to][messages[i].recv_round];
  }
  std::vector<int> round(p, 0);
  auto advance = [&] {  // past the rounds with nothing left to move (local steps only)
    for (int r = 0; r < p; ++r) {
      while (round[r] < static_cast<int>(open[r].size()) && open[r][round[r]] == 0) ++round[r];
    }
  };
  advance();
  double us = 0;
  for (size_t left = messages.size(); left > 0;) {
    std::vector<size_t> ready;
    for (int r = 0; r < p; ++r) {
      if (round[r] >= static_cast<int>(sends[r].size())) continue;
      for (size_t i : sends[r][round[r]]) {
        if (!messages[i].moved && round[messages[i].to] == messages[i].recv_round) {
          ready.push_back(i);
        }
      }
    }
    EXPECT_FALSE(ready.empty()) << "deadlock with " << left << " messages left";
    if (ready.empty()) return -1;
    std::vector<Message> wave;
    for (size_t i : ready) {
      Pending& m = messages[i];
      m.moved = true;
      --open[m.from][m.send_round];
      --open[m.to][m.recv_round];
      wave.push_back({m.from, m.to, m.bytes});
    }
    left -= ready.size();
    us += WaveUs(t, wave, c);
    advance();
  }
  return us;
}

// Hosts of p ranks: one host, one rank per host, every equal split (contiguous, and
// dealt round-robin), and uneven hosts.
std::vector<std::shared_ptr<const Topology>> Topologies(int p) {
  std::vector<std::vector<int>> shapes = {{p}, std::vector<int>(p, 1)};
  for (int d = 2; d < p; ++d) {
    if (p % d == 0) shapes.push_back(std::vector<int>(p / d, d));
  }
  if (p >= 3) {
    if (p % 2 != 0) shapes.push_back({p - p / 2, p / 2});
    shapes.push_back({1, p - 1});
  }
  std::vector<std::shared_ptr<const Topology>> out;
  for (const auto& shape : shapes) {
    out.push_back(std::make_shared<const Topology>(Topology::Contiguous(shape)));
  }
  if (p >= 4 && p % 2 == 0) {
    std::vector<std::string> ids;
    for (int r = 0; r < p; ++r) ids.push_back(fmt::format("host{}", r % (p / 2)));
    out.push_back(std::make_shared<const Topology>(Topology::FromHostIds(ids)));
  }
  return out;
}

bool Rooted(Collective coll) {
  return coll == Collective::kBroadcast || coll == Collective::kReduce ||
         coll == Collective::kGather || coll == Collective::kScatter;
}

// How far the walk may be from the estimate, as walked / estimate - 1 in [low, high].
struct Expected {
  double low, high;
  const char* why;
};

constexpr Expected kSameSteps = {-1e-9, 1e-9, "the estimate takes the schedule's steps"};
// Within a factor of two either way, for the reason given.
Expected Approximation(const char* why) { return {-0.5, 1.0, why}; }

// `real_shm`: the figures have a cost for shm; false where it is free (see WithFreeShm).
Expected ExpectedFor(const Algorithm& a, const Topology& t, bool real_shm) {
  const std::string name = a.name;
  const auto hosts = t.Hosts();
  const int p = static_cast<int>(t.host_of.size());
  const int num_hosts = static_cast<int>(hosts.size());
  bool uniform = true;
  for (const auto& h : hosts) uniform = uniform && h.size() == hosts[0].size();
  const bool shared_hosts = num_hosts > 1 && num_hosts < p;  // hops of both kinds
  if (a.coll == Collective::kBroadcast && name == "ring" && shared_hosts) {
    // PipelineUs charges each hop of the fill once and every further segment a step of
    // all hops at once; the walk charges each wave as its slowest active hop, and the
    // fill's and drain's waves have fewer: more where shm hops wait on network ones, less
    // where hops share a link (interleaved hosts). Either way within the segs + size - 2
    // waves of the slowest step.
    return Approximation("the ring broadcast's pipeline fill and drain");
  }
  const bool top_down_tree = (a.coll == Collective::kBroadcast && name == "binomial") ||
                             (a.coll == Collective::kBroadcast && name == "scatter_allgather") ||
                             (a.coll == Collective::kScatter && name == "binomial") ||
                             (a.coll == Collective::kAllReduce && name == "binomial");
  if (top_down_tree && (p & (p - 1)) != 0) {
    // A rank whose subtree the world clips skips a level and forwards early in the walk
    // (as the executor would: its round for the missing child is not there), where the
    // estimate keeps the tree's levels in step; where that early message shares a host
    // link with another (interleaved hosts), the walk costs more. On power-of-two worlds
    // the levels line up.
    return Approximation("a clipped binomial subtree forwards ahead of its level");
  }
  if (a.coll == Collective::kAllReduce && name == "rabenseifner" && !uniform &&
      (p & (p - 1)) != 0) {
    // The ranks outside the fold start halving while it runs, so the walk's waves mix the
    // fold with their largest exchange, which on uneven hosts shares links differently
    // from the estimate's steps, in which everyone waits for the fold.
    return Approximation("ranks outside Rabenseifner's fold run ahead of it");
  }
  if (!real_shm) return kSameSteps;
  if (a.coll == Collective::kBroadcast && name == "hierarchical" && num_hosts < p) {
    // The estimate charges the root's scatter (and the hand-off to extras) as one stream
    // of m-1 chunks over shm; MessagesUs charges m-1 messages side by side plus their
    // handling latencies. The inter-host steps agree (WithFreeShm).
    return Approximation("the hierarchical broadcast's scatter over shm");
  }
  if (a.coll == Collective::kAllReduce && name.rfind("hierarchical", 0) == 0 && !uniform) {
    // The estimate unfolds the extras one per active per step, as it folds them, where
    // the schedule hands the result back in one round; and hosts without extras start
    // their reduce-scatter while the others fold.
    return Approximation("the hierarchical allreduce's unfold of extras");
  }
  if (a.segments != nullptr && shared_hosts) {
    // Where segments overlap, a round holds steps of two or three segments: the walk
    // merges a pair's messages of two segments into one and charges a handling latency
    // for each message beyond one send and one receive, the estimate adds the times of
    // a rank's host steps and takes the larger of those and its rail step.
    return Approximation("the pipelined segments' shared rounds");
  }
  if (a.coll == Collective::kAllGather && name == "hierarchical_doubling" && num_hosts > 2) {
    // The estimate lets the handling latencies of a rail step's many messages overlap the
    // wire time of those already moving (as the simulator does); MessagesUs adds them.
    // The folded hosts' groups are costed as the largest.
    return Approximation("the doubling rails' overlapped message handling");
  }
  return kSameSteps;
}

// Every algorithm with an estimate, world sizes 2..8, every topology, root 0 and p-1:
// the walk of its schedules within Expected() of the estimate, under each of `models`.
void CheckAll(const std::vector<CostModel>& models, bool real_shm) {
  for (const Algorithm& a : AllAlgorithms()) {
    if (a.estimate_us == nullptr) continue;
    for (int p = 2; p <= 8; ++p) {
      for (const auto& t : Topologies(p)) {
        for (size_t count : {size_t{840}, size_t{840} * 64, size_t{840} * 16384}) {
          for (int root : {0, p - 1}) {
            if (root != 0 && !Rooted(a.coll)) continue;
            CollectiveSpec spec{a.coll, 0, p, root, count};
            spec.topology = t;
            if (!a.supports(spec)) continue;
            std::vector<Schedule> schedules = BuildAllRanks(a.build, spec);
            for (const CostModel& costs : models) {
              if (a.segments != nullptr) {  // the segments the planner would give it
                spec.segments = a.segments(CostQuery{*t, count, 4, root}, costs);
                schedules = BuildAllRanks(a.build, spec);
              }
              const double estimate = EstimateUs(a, spec, 4, costs);
              const double walked = WalkUs(*t, schedules, 4, costs);
              const Expected expected = ExpectedFor(a, *t, real_shm);
              // Where shm is free an all-shm call costs next to nothing: 1e-6 us either way.
              const double slack = 1e-6;
              EXPECT_GE(walked, estimate * (1 + expected.low) - slack)
                  << CollectiveName(a.coll) << " " << a.name << " on " << t->Describe()
                  << ", count " << count << ", root " << root << ", " << costs.ToString()
                  << ": walked " << walked << " us, estimate " << estimate << " us ("
                  << expected.why << ")";
              EXPECT_LE(walked, estimate * (1 + expected.high) + slack)
                  << CollectiveName(a.coll) << " " << a.name << " on " << t->Describe()
                  << ", count " << count << ", root " << root << ", " << costs.ToString()
                  << ": walked " << walked << " us, estimate " << estimate << " us ("
                  << expected.why << ")";
            }
          }
        }
      }
    }
  }
}

// The walk itself, by hand: the ring allreduce on 2 hosts x 2 ranks, 4 MB (6 steps of
// 1 MB, one message leaving each host per step), and the linear gather of 1 MB blocks
// (2 blocks in over host 0's link at once, 2 more receives for the root to handle).
TEST(EstimateMatchesSchedule, WalkByHand) {
  const auto t = std::make_shared<const Topology>(Topology::Contiguous({2, 2}));
  CollectiveSpec spec{Collective::kAllReduce, 0, 4, 0, 1000000};
  spec.topology = t;
  const CostModel c;
  const Algorithm& ring = *FindAlgorithm(Collective::kAllReduce, "ring");
  EXPECT_NEAR(WalkUs(*t, BuildAllRanks(ring.build, spec), 4, c), 6 * (25 + 1e6 / 1250), 1e-6);
  spec.coll = Collective::kGather;
  spec.count = 250000;
  const Algorithm& linear = *FindAlgorithm(Collective::kGather, "linear");
  EXPECT_NEAR(WalkUs(*t, BuildAllRanks(linear.build, spec), 4, c), 25 + 2 * 1e6 / 1250 + 2 * 2,
              1e-6);
}

// Every algorithm has an estimate: the planner weighs them, and weftGroupSimulateEnd adds
// them up (the barrier's too, though it has no rival).
TEST(EstimateMatchesSchedule, EveryAlgorithmHasAnEstimate) {
  for (const Algorithm& a : AllAlgorithms()) EXPECT_NE(a.estimate_us, nullptr) << a.name;
}

// The figures the planner meets: the defaults, a slow shaped link, four fast links.
TEST(EstimateMatchesSchedule, WithRealFigures) {
  CheckAll(
      {CostModel(), CostModel::Parse("inter_gbps=0.5").value(),
       CostModel::Parse("intra_gbps=2400,inter_alpha_us=15,inter_gbps=100,inter_links=4").value()},
      /*real_shm=*/true);
}

// With shm free (no latency, next to infinite bandwidth) only the steps between hosts
// count, and there the estimates that approximate their shm phases (ExpectedFor) must
// take exactly their schedules' steps too.
TEST(EstimateMatchesSchedule, WithFreeShm) {
  const std::string free_shm = "intra_alpha_us=0,intra_gbps=1e15,";
  CheckAll(
      {CostModel::Parse(free_shm).value(), CostModel::Parse(free_shm + "inter_gbps=0.5").value(),
       CostModel::Parse(free_shm + "inter_alpha_us=15,inter_gbps=100,inter_links=4").value()},
      /*real_shm=*/false);
}

}  // namespace
}  // namespace weft::sched
