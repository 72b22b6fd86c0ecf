// The planner's choice and the cost model's figures over a table of calls, against a
// golden file: every collective, sizes from 0 to 256 MiB, world sizes from 2 to 4096,
// placements from no topology to hosts of uneven and interleaved ranks. Any change to a
// choice or to an estimate (beyond 1e-9 relative) shows up here, so a refactoring of the
// cost model or the planner can be checked to change nothing.
//
// Each line is one call: "<collective> <bytes> p=<size> <placement> root=<root>
// [<costs>]: <chosen> | <algorithm> <us> ...", the chosen algorithm's name and then the
// model's estimate for every algorithm of the collective that supports the call where
// the ranks span hosts (where the planner weighs them), for the chosen one elsewhere
// (-1: not costed, e.g. without a topology). The largest world gets fewer sizes and
// placements (see kHugeWorld), the second cost model only the regular placements.
//
// To regenerate the golden file after an intended change, run
//   WEFT_UPDATE_GOLDEN=1 ./tests/weft_sched_tests --gtest_filter='PlannerChoiceTable.*'
// from the build directory; it rewrites testdata/planner_choice_table.txt next to this
// file (found through __FILE__), and the diff shows what changed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sched/planner.h"
#include "sched/registry.h"

namespace weft::sched {
namespace {

const size_t kSizes[] = {0,         1,       8,       64,       1 << 10,  8 << 10,  64 << 10,
                         256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20};
const int kWorlds[] = {2, 3, 4, 8, 9, 16, 64, 1024, 4096};
// The model's pairwise and chain estimates take O(p^2) at p ranks (seconds at 4096 for
// the whole table), so the largest world gets these sizes and placements only.
constexpr int kHugeWorld = 4096;
const size_t kHugeWorldSizes[] = {64, 1 << 20, 64 << 20};

enum class Kind { kNone, kOneHost, kAlone, kUniform, kUneven, kInterleaved };

// A placement of p ranks: a label for the table and the topology (null: none).
struct Placement {
  Kind kind;
  std::string label;
  std::shared_ptr<const Topology> topology;
  bool root_last = false;  // rooted collectives use root p-1 instead of 0
};

std::shared_ptr<const Topology> Contiguous(const std::vector<int>& per_host) {
  return std::make_shared<const Topology>(Topology::Contiguous(per_host));
}

// The largest divisor of p that is at most 8 and leaves at least two hosts (0: none).
int RanksPerHost(int p) {
  for (int d = 8; d >= 2; --d) {
    if (p % d == 0 && p / d >= 2) return d;
  }
  return 0;
}

// Every placement worth a row for p ranks; repeats (p = 2 has no uneven hosts) are left out.
std::vector<Placement> PlacementsFor(int p) {
  std::vector<Placement> out;
  auto add = [&](Kind kind, std::string label, std::shared_ptr<const Topology> t,
                 bool root_last = false) {
    for (const Placement& seen : out) {
      if (seen.topology && t && seen.topology->host_of == t->host_of) return;
    }
    out.push_back({kind, std::move(label), std::move(t), root_last});
  };
  add(Kind::kNone, "none", nullptr);
  add(Kind::kOneHost, "one_host", Contiguous({p}));
  add(Kind::kAlone, "alone", Contiguous(std::vector<int>(p, 1)));
  // Several hosts with several ranks each, contiguous as launchers place them.
  if (const int d = RanksPerHost(p); d > 0) {
    add(Kind::kUniform, fmt::format("{}x{}", p / d, d), Contiguous(std::vector<int>(p / d, d)));
  }
  // Uneven hosts: three ranks each, the last one the rest (or one fewer, one more first).
  std::vector<int> uneven(p / 3, 3);
  if (p % 3 != 0) {
    uneven.push_back(p % 3);
  } else if (uneven.size() >= 2) {
    ++uneven.front();
    --uneven.back();
  } else {
    uneven = {2, 1};
  }
  if (uneven.size() >= 2) {
    std::string label = "uneven";
    for (size_t i = 0; i < uneven.size() && i < 3; ++i) label += fmt::format(",{}", uneven[i]);
    if (uneven.size() > 3) label += fmt::format(",..{}", uneven.back());
    add(Kind::kUneven, label, Contiguous(uneven));
  }
  // Interleaved: rank r on host r % H (round-robin launchers), two or more per host.
  if (const int d = RanksPerHost(p); d > 0) {
    std::vector<std::string> ids;
    for (int r = 0; r < p; ++r) ids.push_back(fmt::format("h{}", r % (p / d)));
    add(Kind::kInterleaved, fmt::format("interleaved{}x{}", p / d, d),
        std::make_shared<const Topology>(Topology::FromHostIds(ids)), true);
  }
  return out;
}

bool Rooted(Collective coll) {
  return coll == Collective::kBroadcast || coll == Collective::kReduce ||
         coll == Collective::kGather || coll == Collective::kScatter;
}

struct NamedCosts {
  const char* label;
  CostModel costs;
};

// The defaults (one 10 Gbit/s link per host) and a fabric with four fast links per host,
// where the hierarchical broadcast needs no margin.
std::vector<NamedCosts> CostModels() {
  return {{"default", CostModel()},
          {"links4", CostModel::Parse("intra_gbps=2400,inter_alpha_us=15,inter_gbps=100,"
                                      "inter_links=4")
                         .value()}};
}

// One table line (see the top of the file). Every supported algorithm's estimate where
// the ranks span hosts (where the planner may weigh them); elsewhere the chosen one's.
std::string Row(const Planner& planner, const char* costs_label, Collective coll, size_t bytes,
                int p, const Placement& placement) {
  const size_t elem = bytes % 4 == 0 ? 4 : 1;
  CollectiveSpec spec{coll, 0, p, Rooted(coll) && placement.root_last ? p - 1 : 0, bytes / elem};
  spec.topology = placement.topology;
  auto choice = planner.Explain(PlanRequest{spec, elem});
  std::string line = fmt::format("{} {} p={} {} root={} [{}]: ", CollectiveName(coll), bytes, p,
                                 placement.label, spec.root, costs_label);
  if (!choice.ok()) return line + "ERROR " + choice.status().ToString();
  const Algorithm* chosen = choice.value().algorithm;
  line += fmt::format("{} |", chosen->name);
  const bool hosts = spec.topology != nullptr && spec.topology->NumHosts() > 1;
  for (const Algorithm& a : AllAlgorithms()) {
    if (a.coll != coll || !a.supports(spec) || (!hosts && &a != chosen)) continue;
    line += fmt::format(" {} {:.12g}", a.name, EstimateUs(a.name, spec, elem, planner.costs()));
  }
  return line;
}

std::vector<std::string> Table() {
  std::vector<std::string> rows;
  for (const NamedCosts& costs : CostModels()) {
    const bool defaults = std::string(costs.label) == "default";
    const Planner planner = Planner::Create("", costs.costs).value();
    for (int p : kWorlds) {
      for (const Placement& placement : PlacementsFor(p)) {
        // The second cost model on the placements whose choice depends on the figures.
        const bool regular = placement.kind == Kind::kAlone || placement.kind == Kind::kUniform;
        if (!defaults && (!regular || p == kHugeWorld)) continue;
        if (p == kHugeWorld && !regular && placement.kind != Kind::kOneHost) continue;
        for (int c = 0; c < kNumCollectives; ++c) {
          const Collective coll = static_cast<Collective>(c);
          if (coll == Collective::kBarrier) {  // count is ignored
            rows.push_back(Row(planner, costs.label, coll, 0, p, placement));
            continue;
          }
          if (p == kHugeWorld) {
            for (size_t bytes : kHugeWorldSizes) {
              rows.push_back(Row(planner, costs.label, coll, bytes, p, placement));
            }
            continue;
          }
          for (size_t bytes : kSizes) {
            rows.push_back(Row(planner, costs.label, coll, bytes, p, placement));
          }
        }
      }
    }
  }
  return rows;
}

std::filesystem::path GoldenPath() {
  return std::filesystem::path(__FILE__).parent_path() / "testdata" / "planner_choice_table.txt";
}

// "<key>: <chosen> | <name> <us> ..." split into the key, the chosen name and the pairs.
struct ParsedRow {
  std::string key, chosen;
  std::vector<std::pair<std::string, double>> estimates;
};

ParsedRow Parse(const std::string& line) {
  ParsedRow row;
  const size_t colon = line.find(": ");
  row.key = line.substr(0, colon);
  std::istringstream in(colon == std::string::npos ? "" : line.substr(colon + 2));
  std::string bar, name;
  in >> row.chosen >> bar;
  double us = 0;
  while (in >> name >> us) row.estimates.emplace_back(name, us);
  return row;
}

bool Near(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

TEST(PlannerChoiceTable, MatchesGolden) {
  const std::vector<std::string> rows = Table();
  const std::filesystem::path path = GoldenPath();
  const char* update = std::getenv("WEFT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path);
    for (const std::string& row : rows) out << row << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path << " (" << rows.size() << " rows)";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot read " << path << "; see the top of " << __FILE__;
  std::vector<std::string> golden;
  for (std::string line; std::getline(in, line);) golden.push_back(line);
  ASSERT_EQ(rows.size(), golden.size()) << "the table's shape changed; regenerate it";
  int failures = 0;
  for (size_t i = 0; i < rows.size() && failures < 20; ++i) {
    const ParsedRow want = Parse(golden[i]), got = Parse(rows[i]);
    bool same = want.key == got.key && want.chosen == got.chosen &&
                want.estimates.size() == got.estimates.size();
    for (size_t k = 0; same && k < want.estimates.size(); ++k) {
      same = want.estimates[k].first == got.estimates[k].first &&
             Near(want.estimates[k].second, got.estimates[k].second);
    }
    if (!same) {
      ++failures;
      ADD_FAILURE() << "row " << i + 1 << "\n  golden: " << golden[i] << "\n  now:    " << rows[i];
    }
  }
}

}  // namespace
}  // namespace weft::sched
