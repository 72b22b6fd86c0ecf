#include "validate_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cluster_build.h"
#include "core/env.h"
#include "plot.h"
#include "sim/collective.h"
#include "sim/fit.h"
#include "common/byte_size.h"
#include "flags.h"

namespace weft::sim::cli {
namespace {

struct Point {
  std::string op;
  size_t bytes = 0;
  DataType dtype = DataType::kFloat32;
  double measured_s = 0;
  double k = 0, b = 0;    // the prediction's affine dependence on alpha (sim/fit.h)
  std::string ran;        // the algorithm the measurement ran; "" when the file predates it
  std::string algorithm;  // the algorithm predicted
  double predicted_s = 0;
  // Measured and predicted are different schedules: the error says nothing of the model.
  bool mismatched() const { return !ran.empty() && ran != algorithm; }
  double err_pct() const { return (predicted_s - measured_s) / measured_s * 100; }
};

// The out-of-place rows of weft-bench --json files (the in-place column is the same
// schedule; one column keeps the table honest about what was compared), sorted by
// collective and size.
Result<std::vector<Point>> ReadMeasured(const std::string& list) {
  std::vector<Point> points;
  std::stringstream names(list);
  std::string path;
  while (std::getline(names, path, ',')) {
    std::ifstream in(path);
    if (!in) return InvalidArgument(fmt::format("cannot open {}", path));
    std::stringstream text;
    text << in.rdbuf();
    const auto j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.contains("results") || !j["results"].is_array()) {
      return InvalidArgument(fmt::format("{}: not a weft-bench --json file", path));
    }
    for (const auto& r : j["results"]) {
      const auto& oop = r.value("out_of_place", nlohmann::json());
      if (!oop.is_object() || !oop.contains("time_us") || !oop["time_us"].is_number()) continue;
      Point p;
      p.op = r.value("op", "");
      p.bytes = r.value("size_bytes", size_t{0});
      const auto t = ParseDataType(r.value("type", "float32"));
      if (!t || !sched::CollectiveFromName(p.op) || p.bytes == 0) {
        return InvalidArgument(fmt::format("{}: unreadable row {}", path, r.dump()));
      }
      p.dtype = *t;
      p.measured_s = oop["time_us"].get<double>() * 1e-6;
      if (oop.contains("algorithm") && oop["algorithm"].is_string()) {
        p.ran = oop["algorithm"].get<std::string>();
      }
      // Repeated sweeps: keep the fastest. Other jobs on a shared machine only ever add
      // time, so the minimum is the best estimate of what the network allows.
      auto same = std::find_if(points.begin(), points.end(), [&](const Point& q) {
        return q.op == p.op && q.bytes == p.bytes && q.dtype == p.dtype;
      });
      if (same == points.end()) {
        points.push_back(p);
        continue;
      }
      if (same->ran != p.ran) {
        return InvalidArgument(
            fmt::format("{}: {} of {} bytes ran {} here and {} in an earlier file; compare one "
                        "algorithm at a time",
                        path, p.op, p.bytes, p.ran.empty() ? "an unrecorded algorithm" : p.ran,
                        same->ran.empty() ? "an unrecorded one" : same->ran));
      }
      same->measured_s = std::min(same->measured_s, p.measured_s);
    }
  }
  if (points.empty()) return InvalidArgument("no measured rows");
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return a.op != b.op ? a.op < b.op : a.bytes < b.bytes;
  });
  return points;
}

// `force_ran`: predict the algorithm the measurement ran, when it is known.
Result<Prediction> At(const ClusterSpec& base, const Point& p, double alpha_s, bool force_ran) {
  ClusterSpec c = base;
  c.inter_alpha_s = alpha_s;
  CollectiveQuery q;
  q.coll = *sched::CollectiveFromName(p.op);
  q.bytes = p.bytes;
  q.dtype = p.dtype;
  if (force_ran && !p.ran.empty()) q.algo = p.op + ":" + p.ran;
  // The measured runs chose with weft's built-in figures, or with WEFT_COST_MODEL when
  // it was set for them (set it here too): predict the algorithm they ran. Read once;
  // the alpha fit calls this for every point and probe.
  static const Result<sched::CostModel> kMeasuredRunsCosts =
      sched::CostModel::Parse(GetEnv("WEFT_COST_MODEL").value_or(""));
  WEFT_ASSIGN_OR_RETURN(q.planner_costs, kMeasuredRunsCosts);
  return PredictCollective(c, q);
}

bool WriteJson(const std::string& path, const ClusterSpec& c, double alpha_s, bool fitted,
               const std::vector<Point>& pts) {
  nlohmann::json j;
  j["cluster"] = {{"name", c.name},
                  {"hosts", c.hosts},
                  {"ranks", c.ranks()},
                  {"nic_gbit", c.nic_bytes_per_s * 8 / 1e9},
                  {"alpha_inter_us", alpha_s * 1e6},
                  {"alpha_fitted", fitted}};
  for (const Point& p : pts) {
    j["rows"].push_back(
        {{"op", p.op},
         {"bytes", p.bytes},
         {"algorithm", p.algorithm},
         {"measured_algorithm", p.ran.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.ran)},
         {"measured_us", p.measured_s * 1e6},
         {"predicted_us", p.predicted_s * 1e6},
         {"error_pct", p.err_pct()}});
  }
  std::ofstream out(path);
  return static_cast<bool>(out << j.dump(2) << "\n");
}

bool WriteValidationPlot(const std::string& path, const ClusterSpec& c,
                         const std::vector<Point>& pts) {
  std::map<std::string, std::pair<Series, Series>> by_op;
  for (const Point& p : pts) {
    auto& [meas, pred] = by_op[p.op];
    meas.label = p.op + " measured";
    pred.label = p.op + " weft-sim";
    const double f = BusBwFactor(*sched::CollectiveFromName(p.op), c.ranks());
    meas.x.push_back(static_cast<double>(p.bytes));
    meas.y.push_back(p.bytes / p.measured_s / 1e9 * f);
    pred.x.push_back(static_cast<double>(p.bytes));
    pred.y.push_back(p.bytes / p.predicted_s / 1e9 * f);
  }
  std::vector<Series> series;
  for (auto& [op, s] : by_op) {
    series.push_back(s.first);
    series.push_back(s.second);
  }
  PlotSpec spec{fmt::format("weft-bench vs weft-sim, {} x {} hosts", c.name, c.hosts),
                "message size (bytes)", "busbw (GB/s)", true};
  return WritePlot(path, spec, series);
}

}  // namespace

CLI::App* AddValidateCommand(CLI::App* app, ValidateOptions* o) {
  CLI::App* cmd = app->add_subcommand(
      "validate", "compare weft-bench --json measurements with predictions (alpha fitted)");
  AddClusterOptions(cmd, &o->cluster);
  cmd->add_option("--measured", o->measured, "weft-bench --json files, comma-separated")
      ->required();
  cmd->add_option("--fit-max", o->fit_max, "fit alpha on sizes up to this")->capture_default_str();
  cmd->add_option("--check-from", o->check_from, "hold sizes from this up to --tolerance")
      ->capture_default_str();
  cmd->add_option("--tolerance", o->tolerance_pct, "allowed |error| in percent")
      ->capture_default_str();
  cmd->add_flag("--no-fit", o->no_fit, "use the cluster's alpha as given");
  cmd->add_flag("--predict-what-ran", o->predict_what_ran,
                "predict the algorithm each measurement ran, not the planner's choice today");
  cmd->add_option("--json", o->json_path, "write the error table as JSON");
  AddPlotOption(cmd, &o->plot_path, "measured vs predicted busbw");
  return cmd;
}

int RunValidate(const ValidateOptions& o) {
  auto cluster = BuildCluster(o.cluster);
  auto pts = ReadMeasured(o.measured);
  auto fit_max = ParseSizeFlag("--fit-max", o.fit_max);
  auto check_from = ParseSizeFlag("--check-from", o.check_from);
  for (const Status& s : {cluster.status(), pts.status(), fit_max.status(), check_from.status()}) {
    if (!s.ok()) fmt::print(stderr, "weft-sim validate: {}\n", s.ToString());
  }
  if (!cluster.ok() || !pts.ok() || !fit_max.ok() || !check_from.ok()) return 2;
  const ClusterSpec& c = *cluster;
  // t(alpha) = k alpha + b: two simulations per point (exact when the schedule's
  // critical path does not change with alpha, which holds without contention).
  constexpr double kProbe = 100e-6;
  std::vector<AlphaSample> samples;
  for (Point& p : *pts) {
    auto t0 = At(c, p, 0, o.predict_what_ran), t1 = At(c, p, kProbe, o.predict_what_ran);
    if (!t0.ok() || !t1.ok()) {
      fmt::print(stderr, "weft-sim validate: {} {}: {}\n", p.op, p.bytes,
                 (!t0.ok() ? t0 : t1).status().ToString());
      return 1;
    }
    p.b = t0->seconds;
    p.k = (t1->seconds - t0->seconds) / kProbe;
    p.algorithm = t0->algorithm;
    // Another algorithm's time would fit alpha to the wrong schedule.
    if (p.bytes <= *fit_max && !p.mismatched()) samples.push_back({p.k, p.b, p.measured_s});
  }
  const bool fit = !o.no_fit && !samples.empty();
  const double alpha = fit ? FitAlpha(samples) : c.inter_alpha_s;
  int bad = 0, checked = 0, mismatched = 0;
  double sum_abs = 0;
  fmt::print(
      "# weft-sim validate: {} x {} hosts, {} rank(s) each, NIC {:.4g} Gbit/s (payload), "
      "alpha {:.1f} us ({})\n",
      c.name, c.hosts, c.accels_per_host, c.nic_bytes_per_s * 8 / 1e9, alpha * 1e6,
      fit ? fmt::format("fitted on {} sizes <= {}", samples.size(), o.fit_max) : "given");
  fmt::print("#{:>11} {:>12} {:>25} {:>13} {:>13} {:>8}\n", "op", "size", "algorithm",
             "measured(us)", "predicted(us)", "error");
  for (Point& p : *pts) {
    auto pred = At(c, p, alpha, o.predict_what_ran);
    if (!pred.ok()) {
      fmt::print(stderr, "weft-sim validate: {}\n", pred.status().ToString());
      return 1;
    }
    p.algorithm = pred->algorithm;
    p.predicted_s = pred->seconds;
    const bool held = p.bytes >= *check_from;
    if (held && !p.mismatched()) {
      ++checked;
      sum_abs += std::fabs(p.err_pct());
      if (std::fabs(p.err_pct()) > o.tolerance_pct) ++bad;
    }
    if (p.mismatched()) ++mismatched;
    std::string flag;
    if (p.mismatched()) {
      flag = fmt::format("  <-- ran {}", p.ran);
    } else if (held && std::fabs(p.err_pct()) > o.tolerance_pct) {
      flag = "  <-- over";
    }
    fmt::print("{:>12} {:>12} {:>25} {:>13.1f} {:>13.1f} {:>+7.1f}%{}\n", p.op, tools::FormatByteSize(p.bytes),
               p.algorithm, p.measured_s * 1e6, p.predicted_s * 1e6, p.err_pct(), flag);
  }
  fmt::print("# sizes >= {}: {} rows, mean |error| {:.1f}%, {} over {}%\n", o.check_from, checked,
             checked ? sum_abs / checked : 0.0, bad, o.tolerance_pct);
  if (mismatched > 0) {
    // A different schedule was measured: its error would be about the planner, not the
    // model. Re-measure, or predict what ran.
    fmt::print(
        "# {} row(s) ran another algorithm than the one predicted (the planner's "
        "choice differs from the measured run's); not counted above; "
        "--predict-what-ran predicts what ran\n",
        mismatched);
  }
  if (!o.json_path.empty() && !WriteJson(o.json_path, c, alpha, fit, *pts)) {
    fmt::print(stderr, "weft-sim: cannot write {}\n", o.json_path);
    return 1;
  }
  if (!o.plot_path.empty() && !WriteValidationPlot(o.plot_path, c, *pts)) return 1;
  return bad == 0 && mismatched == 0 ? 0 : 1;
}

}  // namespace weft::sim::cli
