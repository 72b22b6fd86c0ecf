// `weft-sim nccl-validate`: the NCCL reference model against published nccl-tests runs.
#include "nccl_cmd.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/catalog.h"
#include "sim/data_dir.h"
#include "sim/nccl_model.h"

namespace weft::sim::cli {
namespace {

// `given` when the user named a file, else the shipped calibration/`file`.
Result<std::string> GivenOrShipped(const std::string& given, const std::string& file) {
  if (!given.empty()) return given;
  return ShippedDataPath("calibration/" + file);
}

std::string SizeName(double bytes) {
  const char* units[] = {"B", "K", "M", "G"};
  int u = 0;
  while (u < 3 && bytes >= 1024) bytes /= 1024, ++u;
  return fmt::format("{:g}{}", bytes, units[u]);
}

struct Row {
  PublishedRow published;
  NcclPrediction predicted;
  double error = 0;  // predicted / published - 1
};

// The figure set covering each instance, from nccl_figures.json.
Result<std::map<std::string, NcclFigures>> FiguresByInstance(const nlohmann::json& j) {
  std::map<std::string, NcclFigures> by_instance;
  if (!j.contains("sets")) return InvalidArgument("figures: no \"sets\"");
  try {  // a missing or mistyped figure is reported, not thrown
    for (const auto& s : j["sets"]) {
      NcclFigures f;
      f.base_us = s.at("base_us"), f.net_hop_us = s.at("net_hop_us");
      f.nvlink_hop_us = s.at("nvlink_hop_us"), f.nic_fraction = s.at("nic_fraction");
      f.nvlink_fraction = s.at("nvlink_fraction"), f.nvls = s.at("nvls");
      for (const auto& i : s.at("instances")) by_instance[i.get<std::string>()] = f;
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("figures: ") + e.what());
  }
  return by_instance;
}

Result<ClusterSpec> ClusterOf(const Catalog& catalog, const PublishedRow& r) {
  const Instance* inst = catalog.Find(r.instance);
  if (!inst) return InvalidArgument("not in the catalog: " + r.instance);
  Result<ClusterSpec> c = ClusterFor(*inst, r.nodes);
  if (c.ok() && c->ranks() != r.gpus)
    return InvalidArgument(fmt::format("{} x {}: {} GPUs in the data, {} in the model",
                                               r.nodes, r.instance, r.gpus, c->ranks()));
  return c;
}

// Refits every set on its instances' fit rows and writes the figures back into `j`.
Status Refit(const Catalog& catalog, const std::vector<PublishedRow>& rows, nlohmann::json* j) {
  for (auto& s : (*j)["sets"]) {
    std::vector<NcclSample> samples;
    for (const PublishedRow& r : rows) {
      bool covered = false;
      for (const auto& i : s["instances"]) covered |= i.get<std::string>() == r.instance;
      if (!covered || r.role != "fit") continue;
      Result<ClusterSpec> c = ClusterOf(catalog, r);
      if (!c.ok()) return c.status();
      samples.push_back({*c, r.bytes, r.busbw_gbps});
    }
    if (samples.empty()) return InvalidArgument("no fit rows for the set " + s.value("name", std::string("?")));
    const NcclFigures f = FitNcclFigures(samples, s["nvls"].get<bool>());
    // Rounded to `per` steps (dividing by an integer gives the shortest decimal back).
    auto round = [](double v, double per) { return std::round(v * per) / per; };
    s["base_us"] = round(f.base_us, 100), s["net_hop_us"] = round(f.net_hop_us, 100);
    s["nvlink_hop_us"] = round(f.nvlink_hop_us, 1000);
    s["nic_fraction"] = round(f.nic_fraction, 1e4);
    s["nvlink_fraction"] = round(f.nvlink_fraction, 1e4);
    s["fit_rows"] = samples.size();
  }
  return Status::Ok();
}

void PrintSummary(const std::vector<Row>& rows, bool markdown) {
  for (const char* role : {"fit", "holdout"}) {
    int n = 0, big = 0, big_ok = 0, mid = 0, mid_ok = 0;
    double sum = 0;
    for (const Row& r : rows) {
      if (r.published.role != role) continue;
      ++n, sum += std::fabs(r.error);
      if (r.published.bytes >= 512.0 * (1 << 20)) ++big, big_ok += std::fabs(r.error) <= 0.15;
      if (r.published.bytes >= 32.0 * (1 << 20)) ++mid, mid_ok += std::fabs(r.error) <= 0.30;
    }
    fmt::print("{}{} rows: {}, mean |error| {:.1f}%; >= 512M within 15%: {} / {}; "
               ">= 32M within 30%: {} / {}\n",
               markdown ? "- " : "", role, n, n ? 100 * sum / n : 0, big_ok, big, mid_ok, mid);
  }
}

}  // namespace

Result<NcclFigures> NcclFiguresFor(const std::string& path, const std::string& instance) {
  WEFT_ASSIGN_OR_RETURN(const std::string file, GivenOrShipped(path, "nccl_figures.json"));
  nlohmann::json j;
  try {
    std::ifstream(file) >> j;
  } catch (const std::exception& e) {
    return InvalidArgument(file + ": " + e.what());
  }
  Result<std::map<std::string, NcclFigures>> sets = FiguresByInstance(j);
  if (!sets.ok()) return sets.status();
  if (!sets->count(instance))
    return InvalidArgument(file + ": no calibrated NCCL figures for " + instance);
  return sets->at(instance);
}

CLI::App* AddNcclValidateCommand(CLI::App* app, NcclValidateOptions* o) {
  CLI::App* cmd = app->add_subcommand(
      "nccl-validate",
      "weft-sim's NCCL reference model (ring / tree / NVLS tree, LL / LL128 / Simple) against "
      "published nccl-tests allreduce results: one row per result, the error, and per role "
      "(fit / holdout) how many rows meet +-15% from 512 MiB and +-30% from 32 MiB");
  cmd->add_option("--data", o->data,
                  "published results CSV (default: the shipped sim/calibration/published.csv)");
  cmd->add_option("--figures", o->figures,
                  "figure sets JSON (default: the shipped sim/calibration/nccl_figures.json)");
  cmd->add_option("--catalog", o->catalog, "instance catalog JSON (default: the shipped one)");
  cmd->add_flag("--fit", o->fit,
                "refit every figure set to its instances' rows of role 'fit' (least squares "
                "on log busbw) and write the figures back into the --figures file first");
  cmd->add_flag("--markdown", o->markdown, "print the table as Markdown (docs/SIMULATOR.md)");
  return cmd;
}

int RunNcclValidate(const NcclValidateOptions& o) {
  const Result<std::string> data = GivenOrShipped(o.data, "published.csv");
  const Result<std::string> figures_path = GivenOrShipped(o.figures, "nccl_figures.json");
  if (!data.ok() || !figures_path.ok()) {
    fmt::print(stderr, "weft-sim: {}\n",
               (data.ok() ? figures_path.status() : data.status()).ToString());
    return 1;
  }
  const std::string& figures = figures_path.value();
  Result<Catalog> catalog = o.catalog.empty() ? LoadShippedCatalog() : LoadCatalog(o.catalog);
  Result<std::vector<PublishedRow>> published = LoadPublished(data.value());
  if (!catalog.ok() || !published.ok()) {
    fmt::print(stderr, "weft-sim: {}\n",
               (catalog.ok() ? published.status() : catalog.status()).ToString());
    return 1;
  }
  nlohmann::json j;
  try {
    std::ifstream(figures) >> j;
  } catch (const std::exception& e) {
    fmt::print(stderr, "weft-sim: {}: {}\n", figures, e.what());
    return 1;
  }
  if (!FiguresByInstance(j).ok())
    return fmt::print(stderr, "weft-sim: {}: {}\n", figures, FiguresByInstance(j).status().ToString()), 1;
  if (o.fit) {  // the sets' structure was checked just above, so Refit's lookups hold
    const Status s = Refit(*catalog, *published, &j);
    if (!s.ok()) return fmt::print(stderr, "weft-sim: {}\n", s.ToString()), 1;
    std::ofstream(figures) << j.dump(2) << "\n";
  }
  Result<std::map<std::string, NcclFigures>> sets = FiguresByInstance(j);
  if (!sets.ok()) return fmt::print(stderr, "weft-sim: {}\n", sets.status().ToString()), 1;
  std::vector<Row> rows;
  for (const PublishedRow& p : *published) {
    Result<ClusterSpec> c = ClusterOf(*catalog, p);
    if (!c.ok()) return fmt::print(stderr, "weft-sim: {}\n", c.status().ToString()), 1;
    if (!sets->count(p.instance))
      return fmt::print(stderr, "weft-sim: no figure set for {}\n", p.instance), 1;
    Row r{p, PredictNcclAllreduce(*c, sets->at(p.instance), p.bytes), 0};
    r.error = r.predicted.busbw_gbps / p.busbw_gbps - 1;
    rows.push_back(r);
  }
  const char* fmt_row = o.markdown ? "| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:+.1f}% | {}/{} |\n"
                                   : "{:<12} {:<8} {:<14} {:>5} {:>6} {:>9.1f} {:>9.1f} {:>+7.1f}% {}/{}\n";
  if (o.markdown)
    fmt::print("| source | role | instance | nodes | size | published busbw (GB/s) | predicted "
               "| error | model's choice |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  else
    fmt::print("{:<12} {:<8} {:<14} {:>5} {:>6} {:>9} {:>9} {:>8} {}\n", "source", "role",
               "instance", "nodes", "size", "published", "predicted", "error", "algorithm/protocol");
  for (const Row& r : rows)
    fmt::print(fmt::runtime(fmt_row), r.published.source_id, r.published.role, r.published.instance,
               r.published.nodes, SizeName(r.published.bytes), r.published.busbw_gbps,
               r.predicted.busbw_gbps, 100 * r.error, NcclAlgoName(r.predicted.algo),
               NcclProtoName(r.predicted.proto));
  PrintSummary(rows, o.markdown);
  return 0;
}

}  // namespace weft::sim::cli
