#include "scale_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cluster_build.h"
#include "plot.h"
#include "sim/collective.h"
#include "common/byte_size.h"
#include "flags.h"

namespace weft::sim::cli {
namespace {

struct Point {
  int nodes = 0;
  int ranks = 0;
  Prediction p;
  double wall_min_ms = 0, wall_median_ms = 0;
};

// "8,16,32" -> {8, 16, 32}; nullopt on anything but positive integers.
std::optional<std::vector<int>> ParseNodeCounts(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    int n = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, n);
    if (ec != std::errc() || ptr != text.data() + end || n < 1) return std::nullopt;
    out.push_back(n);
    start = end + 1;
  }
  return out;
}

bool WriteJson(const std::string& path, const ScaleOptions& o, const std::vector<Point>& pts) {
  nlohmann::json j;
  j["instance"] = o.cluster.instance;
  j["op"] = o.collective;  // the key weft-bench's JSON uses
  j["bytes"] = o.bytes;
  j["repeat"] = o.repeat;
  for (const Point& p : pts) {
    j["rows"].push_back({{"nodes", p.nodes},
                         {"ranks", p.ranks},
                         {"algorithm", p.p.algorithm},
                         {"predicted_us", p.p.seconds * 1e6},
                         {"symmetry", p.p.symmetry},
                         {"simulated_ranks", p.p.simulated_ranks},
                         {"wall_min_ms", p.wall_min_ms},
                         {"wall_median_ms", p.wall_median_ms}});
  }
  std::ofstream out(path);
  return static_cast<bool>(out << j.dump(2) << "\n");
}

}  // namespace

CLI::App* AddScaleCommand(CLI::App* app, ScaleOptions* o) {
  CLI::App* cmd = app->add_subcommand(
      "scale", "time the simulator for one collective as the cluster grows (wall vs ranks)");
  AddClusterOptions(cmd, &o->cluster);
  cmd->add_option("--node-counts", o->nodes, "node counts, comma-separated")->capture_default_str();
  AddCollectiveOption(cmd, &o->collective);
  cmd->add_option("-d,--datatype", o->dtype, "element type")->capture_default_str();
  cmd->add_option("-b,--bytes", o->bytes, "message size")->capture_default_str();
  cmd->add_option("--algo", o->algo, "force an algorithm, WEFT_ALGO syntax");
  cmd->add_option("--repeat", o->repeat, "runs per point (median and minimum wall time)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_flag("--no-symmetry", o->no_symmetry, "simulate every rank (no shortcut)");
  cmd->add_option("--json", o->json_path, "also write the rows as JSON to FILE");
  AddPlotOption(cmd, &o->plot_path, "wall time vs ranks");
  return cmd;
}

int RunScale(const ScaleOptions& o) {
  const auto counts = ParseNodeCounts(o.nodes);
  auto op = ParseCollectiveFlag(o.collective);
  auto dtype = ParseDataTypeFlag(o.dtype);
  auto bytes = ParseSizeFlag("-b/--bytes", o.bytes);
  if (!counts)
    fmt::print(stderr,
               "weft-sim scale: --node-counts '{}' is not a comma-separated list of positive "
               "integers (e.g. 8,16,32)\n", o.nodes);
  for (const Status& s : {op.status(), dtype.status(), bytes.status()}) {
    if (!s.ok()) fmt::print(stderr, "weft-sim scale: {}\n", s.message());
  }
  if (!counts || !op.ok() || !dtype.ok() || !bytes.ok()) return 2;
  fmt::print("# weft-sim scale: {} of {} on {}, {} run(s) per point{}\n", o.collective,
             tools::FormatByteSize(*bytes),
             o.cluster.instance, o.repeat, o.no_symmetry ? ", every rank simulated" : "");
  fmt::print("#{:>7} {:>8} {:>25} {:>14} {:>18} {:>12} {:>12}\n", "nodes", "ranks", "algorithm",
             "predicted(us)", "simulated", "wall min", "wall median");
  std::vector<Point> points;
  for (int nodes : *counts) {
    ClusterOptions co = o.cluster;
    co.nodes = nodes;
    auto cluster = BuildCluster(co);
    if (!cluster.ok()) {
      fmt::print(stderr, "weft-sim scale: {}\n", cluster.status().ToString());
      return 2;
    }
    CollectiveQuery q;
    q.coll = *op;
    q.bytes = *bytes;
    q.dtype = *dtype;
    q.algo = o.algo;
    Point pt{nodes, cluster->ranks(), {}, 0, 0};
    std::vector<double> walls;
    for (int r = 0; r < o.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      auto p =
          PredictCollective(*cluster, q, o.no_symmetry ? SymmetryMode::kOff : SymmetryMode::kAuto);
      walls.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!p.ok()) {
        fmt::print(stderr, "weft-sim scale: {} nodes: {}\n", nodes, p.status().ToString());
        return 1;
      }
      pt.p = *p;
    }
    std::sort(walls.begin(), walls.end());
    pt.wall_min_ms = walls.front();
    pt.wall_median_ms = walls[walls.size() / 2];
    fmt::print(
        "{:>8} {:>8} {:>25} {:>14.1f} {:>18} {:>9.1f} ms {:>9.1f} ms\n", nodes, pt.ranks,
        pt.p.algorithm, pt.p.seconds * 1e6,
        pt.p.symmetry == "none" ? fmt::format("all {}", pt.p.simulated_ranks) : pt.p.symmetry,
        pt.wall_min_ms, pt.wall_median_ms);
    std::fflush(stdout);
    points.push_back(pt);
  }
  if (!o.json_path.empty() && !WriteJson(o.json_path, o, points)) {
    fmt::print(stderr, "weft-sim: cannot write {}\n", o.json_path);
    return 1;
  }
  if (!o.plot_path.empty()) {
    Series s{fmt::format("{} {} on {}", o.collective, tools::FormatByteSize(*bytes),
                         o.cluster.instance),
             {},
             {}};
    for (const Point& p : points) {
      s.x.push_back(p.ranks);
      s.y.push_back(p.wall_median_ms / 1e3);
    }
    PlotSpec spec{"weft-sim's own run time vs ranks (median)", "ranks", "wall time (s)", false};
    if (!WritePlot(o.plot_path, spec, {s})) return 1;
  }
  return 0;
}

}  // namespace weft::sim::cli
