#include "train_cmd.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cluster_build.h"
#include "flags.h"
#include "plot.h"
#include "reference_cmd.h"
#include "sim/catalog.h"

namespace weft::sim::cli {
namespace {

struct Run {
  std::string instance;
  std::vector<StepPrediction> steps;  // one per node count
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void AddCommon(CLI::App* cmd, TrainOptions* o) {
  cmd->add_option("--catalog", o->cluster.catalog, "instance catalog JSON");
  cmd->add_option("--models", o->models_path, "model catalog JSON");
  cmd->add_option("-m,--model", o->model, "bert-large, gpt-2, gpt3-1.3B, llama-7B")
      ->capture_default_str();
  cmd->add_option("-N,--nodes", o->nodes, "node counts, comma-separated")->capture_default_str();
  RefuseOption(cmd, "-n", kNodesNotN);
  cmd->add_option("--efficiency", o->efficiency,
                  "achieved / peak dense FLOPs: X for every instance, or INSTANCE=X,... "
                  "(default: the catalog's figure per accelerator)");
  cmd->add_option("--bucket-mib", o->bucket_mib, "gradient bucket (DDP bucket_cap_mb)")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  cmd->add_option("--grad-bytes", o->cfg.grad_bytes, "bytes per gradient element (4 or 2)")
      ->check(CLI::IsMember({2, 4}))
      ->capture_default_str();
  cmd->add_option("--grad-accum", o->cfg.grad_accum, "micro-batches per optimizer step")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--tp", o->cfg.tp,
                  "tensor-parallel ranks (divides the accelerators of a host; activations "
                  "all-reduced per layer over the intra-node links)")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--pp", o->cfg.pp,
                  "pipeline stages (divides the layers; --grad-accum micro-batches fill the "
                  "pipeline, bubble (pp-1)/(m+pp-1))")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--algo", o->cfg.algo,
                  "force the all-reduces' algorithm, WEFT_ALGO syntax (ring, "
                  "allreduce:hierarchical); default: the planner's choice");
  cmd->add_option("--batch", o->batch, "samples per accelerator per micro-batch");
  cmd->add_option("--seq-len", o->seq_len, "sequence length");
  cmd->add_option("--nic-policy", o->cluster.nic_policy, "rail or stripe")
      ->check(CLI::IsMember({"rail", "stripe"}))
      ->capture_default_str();
  cmd->add_option("--alpha-inter-us", o->cluster.alpha_inter_us, "override: inter-node latency");
  cmd->add_option("--json", o->json_path, "write the rows as JSON");
  AddPlotOption(cmd, &o->plot_path, "samples/s vs nodes");
}

Result<Run> Simulate(const TrainOptions& o, const std::string& instance, const ModelSpec& model) {
  WEFT_ASSIGN_OR_RETURN(Catalog cat, o.cluster.catalog.empty() ? LoadShippedCatalog()
                                                                : LoadCatalog(o.cluster.catalog));
  const Instance* inst = cat.Find(instance);
  if (inst == nullptr) {
    // A custom cluster has no TFLOPS, HBM or prices: the step needs a catalog entry
    // (add one with its sources to a --catalog file).
    return InvalidArgument(fmt::format(
        "unknown instance '{}': train and compare need a catalog instance (TFLOPS, HBM, prices)",
        instance));
  }
  Run run{instance, {}};
  TrainConfig cfg = o.cfg;
  WEFT_ASSIGN_OR_RETURN(EfficiencyOverride eff, ParseEfficiencyOverride(o.efficiency));
  cfg.efficiency = eff.For(instance);
  cfg.bucket_bytes = o.bucket_mib * (1 << 20);
  for (const std::string& n : Split(o.nodes)) {
    ClusterOptions co = o.cluster;
    co.instance = instance;
    co.nodes = std::atoi(n.c_str());
    if (co.nodes < 1) return InvalidArgument(fmt::format("bad node count '{}'", n));
    WEFT_ASSIGN_OR_RETURN(ClusterSpec c, BuildCluster(co));
    WEFT_ASSIGN_OR_RETURN(StepPrediction s, PredictStep(c, *inst, model, cfg));
    run.steps.push_back(s);
  }
  return run;
}

double Scaling(const Run& r, const StepPrediction& s) {
  const StepPrediction& base = r.steps.front();
  return s.samples_per_s / (base.samples_per_s * s.nodes / base.nodes);
}

void PrintRun(const Run& r) {
  fmt::print("#{:>5} {:>6} {:>5} {:>8} {:>9} {:>10} {:>9} {:>9} {:>11} {:>7} {:>10}  {:<25} {}\n",
             "nodes", "ranks", "dp", "batch", "comp(ms)", "allred(ms)", "expo(ms)", "step(ms)",
             "samples/s", "scale", "$/step", "DP algorithm", "$/1M samples per option");
  for (const StepPrediction& s : r.steps) {
    std::string per_million;
    for (const auto& [opt, usd] : s.usd_per_million_samples) {
      per_million += fmt::format("{}{:.2f} ({})", per_million.empty() ? "" : ", ", usd, opt);
    }
    const auto od = s.usd_per_step.find("on_demand");
    fmt::print(
        "{:>6} {:>6} {:>5} {:>8.0f} {:>9.1f} {:>10.1f} {:>9.1f} {:>9.1f} {:>11.0f} {:>6.1f}% "
        "{:>10}  {:<25} {}{}\n",
        s.nodes, s.ranks, s.dp, s.samples_per_step, s.compute_s * 1e3, s.overlap.comm_total * 1e3,
        s.overlap.exposed * 1e3, s.step_s * 1e3, s.samples_per_s, Scaling(r, s) * 100,
        od == s.usd_per_step.end() ? std::string("-") : fmt::format("{:.4f}", od->second),
        s.algorithm.empty() ? "-" : s.algorithm,
        per_million.empty() ? std::string("no price") : per_million,
        s.fits_memory ? "" : "  [needs sharding]");
  }
  const StepPrediction& first = r.steps.front();
  if (first.tp == 1 && first.pp == 1) return;
  fmt::print("#  tp {} x pp {}: {:>5} {:>13} {:>13} {:>9} {:>10} {:>8}  {}\n", first.tp, first.pp,
             "nodes", "tp-allred(ms)", "tp on path", "p2p(ms)", "bubble(ms)", "bubble",
             "TP algorithm");
  for (const StepPrediction& s : r.steps) {
    fmt::print("#  {:>15} {:>5} {:>13.3f} {:>13.1f} {:>9.3f} {:>10.1f} {:>7.1f}%  {}\n", "",
               s.nodes, s.tp_allreduce_s * 1e3, s.tp_comm_s * 1e3, s.p2p_s * 1e3, s.bubble_s * 1e3,
               s.bubble_fraction * 100, s.tp_algorithm.empty() ? "-" : s.tp_algorithm);
  }
}

nlohmann::json RunJson(const Run& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StepPrediction& s : r.steps) {
    rows.push_back({{"nodes", s.nodes},
                    {"ranks", s.ranks},
                    {"samples_per_step", s.samples_per_step},
                    {"compute_ms", s.compute_s * 1e3},
                    {"allreduce_ms", s.overlap.comm_total * 1e3},
                    {"exposed_ms", s.overlap.exposed * 1e3},
                    {"step_ms", s.step_s * 1e3},
                    {"samples_per_s", s.samples_per_s},
                    {"scaling", Scaling(r, s)},
                    {"algorithm", s.algorithm},
                    {"tp", s.tp},
                    {"pp", s.pp},
                    {"dp", s.dp},
                    {"tp_allreduce_ms", s.tp_allreduce_s * 1e3},
                    {"tp_algorithm", s.tp_algorithm},
                    {"tp_comm_ms", s.tp_comm_s * 1e3},
                    {"p2p_ms", s.p2p_s * 1e3},
                    {"bubble_ms", s.bubble_s * 1e3},
                    {"bubble_fraction", s.bubble_fraction},
                    {"fits_memory", s.fits_memory},
                    {"usd_per_step", s.usd_per_step},
                    {"usd_per_million_samples", s.usd_per_million_samples}});
  }
  const Efficiency& e = r.steps.front().efficiency;
  return {{"instance", r.instance},
          {"efficiency", e.value},
          {"efficiency_origin", e.origin},
          {"rows", rows}};
}

int Emit(const TrainOptions& o, const ModelSpec& m, const std::vector<Run>& runs) {
  if (!o.json_path.empty()) {
    nlohmann::json j = {
        {"model", m.name},    {"bucket_mib", o.bucket_mib},     {"grad_bytes", o.cfg.grad_bytes},
        {"algo", o.cfg.algo}, {"grad_accum", o.cfg.grad_accum}, {"tp", o.cfg.tp},
        {"pp", o.cfg.pp},     {"micro_batch", m.micro_batch},   {"seq_len", m.seq_len}};
    for (const Run& r : runs) j["runs"].push_back(RunJson(r));
    std::ofstream out(o.json_path);
    if (!(out << j.dump(2) << "\n")) {
      fmt::print(stderr, "weft-sim: cannot write {}\n", o.json_path);
      return 1;
    }
  }
  if (!o.plot_path.empty()) {
    std::vector<Series> series;
    for (const Run& r : runs) {
      Series s{r.instance, {}, {}}, ideal{r.instance + " linear", {}, {}};
      for (const StepPrediction& p : r.steps) {
        s.x.push_back(p.nodes);
        s.y.push_back(p.samples_per_s);
        ideal.x.push_back(p.nodes);
        ideal.y.push_back(r.steps.front().samples_per_s * p.nodes / r.steps.front().nodes);
      }
      series.push_back(s);
      series.push_back(ideal);
    }
    const std::string parallel =
        o.cfg.tp == 1 && o.cfg.pp == 1
            ? std::string("data parallel")
            : fmt::format("tp {} x pp {} x data parallel", o.cfg.tp, o.cfg.pp);
    PlotSpec spec{fmt::format("weft-sim train {} ({})", m.name, parallel), "nodes", "samples/s",
                  false};
    if (!WritePlot(o.plot_path, spec, series)) return 1;
  }
  return 0;
}

Result<ModelSpec> ModelFor(const TrainOptions& o) {
  WEFT_ASSIGN_OR_RETURN(ModelCatalog cat,
                        o.models_path.empty() ? LoadShippedModels() : LoadModels(o.models_path));
  const ModelSpec* m = cat.Find(o.model);
  if (m == nullptr) {
    std::string names;
    for (const ModelSpec& x : cat.models) names += (names.empty() ? "" : ", ") + x.name;
    return InvalidArgument(fmt::format("unknown model '{}'; the catalog has: {}", o.model, names));
  }
  ModelSpec spec = *m;
  if (o.batch > 0) spec.micro_batch = o.batch;
  if (o.seq_len > 0) spec.seq_len = o.seq_len;
  return spec;
}

// Which purchase options the catalog prices for this instance, and which have no
// published figure (so that a missing column is not read as "free").
void PrintPriceOptions(const TrainOptions& o, const std::string& instance) {
  auto cat = o.cluster.catalog.empty() ? LoadShippedCatalog() : LoadCatalog(o.cluster.catalog);
  if (!cat.ok() || cat->Find(instance) == nullptr) return;
  std::string priced, unpriced;
  for (const auto& [option, price] : PriceOptions(*cat->Find(instance))) {
    std::string& list = price ? priced : unpriced;
    list +=
        (list.empty() ? "" : ", ") + (price ? fmt::format("{} ${:.2f}/h", option, *price) : option);
  }
  fmt::print("# prices: {}; no published figure: {}\n", priced.empty() ? "none" : priced,
             unpriced.empty() ? "none" : unpriced);
}

void PrintEfficiency(const Run& r) {
  const Efficiency& e = r.steps.front().efficiency;
  fmt::print("# efficiency {:.3f} of peak dense TFLOPS [{}]\n", e.value, e.origin);
}

void PrintHeader(const TrainOptions& o, const ModelSpec& m) {
  fmt::print(
      "# weft-sim train: {} ({:.3g}B params, {} layers, hidden {}, seq {}, {:.1f} "
      "GFLOP/sample), micro-batch {} per replica, {} micro-batches per step\n",
      m.name, m.params / 1e9, m.layers, m.hidden, m.seq_len, m.FlopsPerSample() / 1e9,
      m.micro_batch, o.cfg.grad_accum);
  fmt::print(
      "#  {:g} MiB buckets of {}-byte gradients overlapped with the backward (2/3 of "
      "compute); one all-reduce at a time; tp {} x pp {} x dp (the remaining ranks)\n",
      o.bucket_mib, o.cfg.grad_bytes, o.cfg.tp, o.cfg.pp);
}

}  // namespace

CLI::App* AddTrainCommand(CLI::App* app, TrainOptions* o) {
  CLI::App* cmd =
      app->add_subcommand("train", "predict a data-parallel training step on 1..N instances");
  cmd->add_option("-i,--instance", o->cluster.instance, "instance type")->capture_default_str();
  AddCommon(cmd, o);
  return cmd;
}

CLI::App* AddCompareCommand(CLI::App* app, TrainOptions* o) {
  CLI::App* cmd = app->add_subcommand(
      "compare", "compare training across instance types, or weft's allreduce with NCCL's");
  cmd->add_option("--instances", o->instances, "instance types, comma-separated")->required();
  AddCommon(cmd, o);
  cmd->add_option("--reference", o->reference,
                  "nccl: weft's planned allreduce against the calibrated NCCL reference, size "
                  "by size, at each of --nodes on each of --instances (training options unread)")
      ->check(CLI::IsMember({"nccl"}));
  cmd->add_option("-b,--minbytes", o->min_bytes, "--reference: smallest size")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", o->max_bytes, "--reference: largest size")
      ->capture_default_str();
  cmd->add_option("-f,--stepfactor", o->factor, "--reference: size multiplier between rows")
      ->check(CLI::Range(1.0001, 1e6))
      ->capture_default_str();
  return cmd;
}

int RunTrain(const TrainOptions& o) {
  auto m = ModelFor(o);
  if (!m.ok()) return fmt::print(stderr, "weft-sim: {}\n", m.status().ToString()), 2;
  PrintHeader(o, *m);
  auto run = Simulate(o, o.cluster.instance, *m);
  if (!run.ok()) return fmt::print(stderr, "weft-sim: {}\n", run.status().ToString()), 1;
  fmt::print("# instance {}\n", run->instance);
  PrintPriceOptions(o, run->instance);
  PrintEfficiency(*run);
  PrintRun(*run);
  return Emit(o, *m, {*run});
}

int RunCompare(const TrainOptions& o) {
  if (!o.reference.empty()) {
    return RunNcclReference({o.cluster.catalog, o.instances, o.nodes, o.min_bytes, o.max_bytes,
                             o.factor, o.json_path});
  }
  auto m = ModelFor(o);
  if (!m.ok()) return fmt::print(stderr, "weft-sim: {}\n", m.status().ToString()), 2;
  PrintHeader(o, *m);
  std::vector<Run> runs;
  for (const std::string& name : Split(o.instances)) {
    auto run = Simulate(o, name, *m);
    if (!run.ok()) return fmt::print(stderr, "weft-sim: {}\n", run.status().ToString()), 1;
    fmt::print("#\n# instance {}\n", name);
    PrintPriceOptions(o, name);
    PrintEfficiency(*run);
    PrintRun(*run);
    runs.push_back(*run);
  }
  // Ratios against the first instance at each node count: throughput, and the cost per
  // million samples for every purchase option both instances have a price for (the
  // published claims are stated this way, on on-demand prices).
  fmt::print("#\n# relative to {} (same node count): throughput x, cost per million samples x\n",
             runs.front().instance);
  for (size_t k = 0; k < runs.front().steps.size(); ++k) {
    const StepPrediction& b = runs.front().steps[k];
    for (size_t i = 1; i < runs.size(); ++i) {
      const StepPrediction& s = runs[i].steps[k];
      std::string costs;
      for (const auto& [option, usd] : s.usd_per_million_samples) {
        const auto base = b.usd_per_million_samples.find(option);
        if (base == b.usd_per_million_samples.end()) continue;
        costs +=
            fmt::format("{}{:.2f}x cost per 1M samples ({:+.0f}%) {}", costs.empty() ? "" : ", ",
                        usd / base->second, (usd / base->second - 1) * 100, option);
      }
      fmt::print("#  {:>3} nodes: {:<16} {:5.2f}x throughput, {}\n", s.nodes, runs[i].instance,
                 s.samples_per_s / b.samples_per_s,
                 costs.empty() ? std::string("no purchase option priced for both") : costs);
    }
  }
  return Emit(o, *m, runs);
}

}  // namespace weft::sim::cli
