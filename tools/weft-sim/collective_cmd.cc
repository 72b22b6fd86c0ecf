#include "collective_cmd.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cluster_build.h"
#include "nccl_cmd.h"
#include "plot.h"
#include "sim/collective.h"
#include "flags.h"

namespace weft::sim::cli {
namespace {

struct Row {
  size_t bytes;
  Prediction p;
  double wall_ms;
};

void PrintHeader(const ClusterSpec& c, const CollectiveOptions& o) {
  fmt::print("# weft-sim collective: {} x {} nodes = {} ranks ({} per node)\n", c.name, c.hosts,
             c.ranks(), c.accels_per_host);
  fmt::print(
      "#  intra-node {:.0f} GB/s per direction, alpha {:.1f} us | {} NIC(s) x {:.2f} GB/s, "
      "policy {}, alpha {:.1f} us | fabric {}\n",
      c.intra_bytes_per_s / 1e9, c.intra_alpha_s * 1e6, c.nics_per_host, c.nic_bytes_per_s / 1e9,
      o.cluster.nic_policy, c.inter_alpha_s * 1e6,
      c.models_leaves() ? fmt::format("oversubscribed {}:1 above leaves of {} hosts",
                                      c.oversubscription, c.hosts_per_leaf)
                        : std::string("non-blocking"));
  fmt::print(
      "#  gamma {:.3g} ns/B, copy {:.3g} ns/B, {:.1f} us per message beyond a round's first "
      "send and receive\n#\n# Collective: {}\n",
      c.reduce_s_per_byte * 1e9, c.copy_s_per_byte * 1e9, c.message_overhead_s() * 1e6,
      o.collective);
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>25}  {:>12}  {:>8}  {:>8}  {:>16}  {:>8}\n", "size",
             "count", "type", "algorithm", "time", "algbw", "busbw", "simulated", "wall");
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>25}  {:>12}  {:>8}  {:>8}  {:>16}  {:>8}\n", "(B)",
             "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "(symmetry)", "(ms)");
}

bool WriteJson(const std::string& path, const ClusterSpec& c, const CollectiveOptions& o,
               const std::vector<Row>& rows) {
  nlohmann::json j;
  j["instance"] = c.name;
  j["nodes"] = c.hosts;
  j["ranks"] = c.ranks();
  j["op"] = o.collective;  // the key weft-bench's JSON uses
  j["dtype"] = o.dtype;
  j["nic_policy"] = o.cluster.nic_policy;
  j["oversubscription"] = c.oversubscription;
  if (!rows.empty()) j["planner_cost_model"] = rows.front().p.planner_costs;
  for (const Row& r : rows) {
    j["rows"].push_back({{"bytes", r.bytes},
                         {"count", r.p.count},
                         {"algorithm", r.p.algorithm},
                         {"segments", r.p.segments},
                         {"time_us", r.p.seconds * 1e6},
                         {"algbw_gbps", r.p.algbw_gbps},
                         {"busbw_gbps", r.p.busbw_gbps},
                         {"symmetry", r.p.symmetry},
                         {"simulated_ranks", r.p.simulated_ranks},
                         {"messages", r.p.messages},
                         {"wall_ms", r.wall_ms}});
  }
  std::ofstream out(path);
  return static_cast<bool>(out << j.dump(2) << "\n");
}

// The NCCL reference model's prediction in the table's terms.
Result<Prediction> PredictNccl(const ClusterSpec& c, const CollectiveQuery& q,
                               const NcclFigures& f) {
  const NcclPrediction n = PredictNcclAllreduce(c, f, static_cast<double>(q.bytes));
  Prediction p;
  p.algorithm = fmt::format("nccl:{}/{}", NcclAlgoName(n.algo), NcclProtoName(n.proto));
  p.count = CountForBytes(q.coll, q.bytes, DataTypeSize(q.dtype), c.ranks());
  p.seconds = n.time_s;
  p.algbw_gbps = static_cast<double>(q.bytes) / n.time_s / 1e9;
  p.busbw_gbps = n.busbw_gbps;
  p.symmetry = "closed form";
  return p;
}

}  // namespace

CLI::App* AddCollectiveCommand(CLI::App* app, CollectiveOptions* o) {
  CLI::App* cmd = app->add_subcommand(
      "collective", "predict one collective's time over a range of sizes (nccl-tests table)");
  AddClusterOptions(cmd, &o->cluster);
  AddCollectiveOption(cmd, &o->collective);
  cmd->add_option("-b,--minbytes", o->min_bytes, "smallest size (K/M/G suffixes)")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", o->max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", o->factor, "size multiplier between rows")
      ->check(CLI::Range(1.0001, 1e6))
      ->capture_default_str();
  cmd->add_option("-d,--datatype", o->dtype, "element type")->capture_default_str();
  cmd->add_option("-r,--root", o->root, "root rank of rooted collectives");
  cmd->add_option("--algo", o->algo,
                  "force an algorithm, WEFT_ALGO syntax (ring, allreduce:rabenseifner)");
  cmd->add_option("--cost-model", o->cost_model,
                  "the figures the planner chooses with, WEFT_COST_MODEL syntax, or 'default' "
                  "for weft's built-in ones (what a run not told its fabric uses); "
                  "default: the cluster's own");
  cmd->add_option("--model", o->model,
                  "weft: weft's own planned schedule, simulated; nccl: the calibrated NCCL "
                  "reference model (allreduce only; the faster of its ring, tree and NVLS tree, "
                  "named in the algorithm column; figures from sim/calibration/nccl_figures.json, "
                  "docs/SIMULATOR.md)")
      ->check(CLI::IsMember({"weft", "nccl"}))
      ->capture_default_str();
  cmd->add_option("--json", o->json_path, "also write the rows as JSON to FILE");
  AddPlotOption(cmd, &o->plot_path, "a busbw-vs-size plot");
  cmd->add_flag("--no-symmetry", o->no_symmetry, "simulate every rank (slow at scale)");
  cmd->add_flag("--verify-symmetry", o->verify_symmetry,
                "check every rank's schedule before using the symmetry shortcut");
  cmd->add_flag("--explain", o->explain,
                "under each row, the planner's reason (as WEFT_DEBUG=INFO logs it): its cost "
                "model's time for every candidate");
  return cmd;
}

int RunCollective(const CollectiveOptions& o) {
  auto cluster = BuildCluster(o.cluster);
  if (!cluster.ok()) {
    fmt::print(stderr, "weft-sim: {}\n", cluster.status().ToString());
    return 2;
  }
  const ClusterSpec& c = *cluster;
  auto op = ParseCollectiveFlag(o.collective);
  auto dtype = ParseDataTypeFlag(o.dtype);
  auto minb = ParseSizeFlag("-b/--minbytes", o.min_bytes);
  auto maxb = ParseSizeFlag("-e/--maxbytes", o.max_bytes);
  for (const Status& s : {op.status(), dtype.status(), minb.status(), maxb.status()}) {
    if (!s.ok()) fmt::print(stderr, "weft-sim: {}\n", s.message());
  }
  if (!op.ok() || !dtype.ok() || !minb.ok() || !maxb.ok()) return 2;
  if (minb.value() > maxb.value()) {
    fmt::print(stderr, "weft-sim: -b/--minbytes {} is larger than -e/--maxbytes {}\n",
               o.min_bytes, o.max_bytes);
    return 2;
  }
  std::optional<sched::CostModel> costs;
  if (!o.cost_model.empty()) {
    auto parsed = sched::CostModel::Parse(o.cost_model == "default" ? "" : o.cost_model);
    if (!parsed.ok()) {
      fmt::print(stderr, "weft-sim: --cost-model: {}\n", parsed.status().ToString());
      return 2;
    }
    costs = *parsed;
  }
  std::optional<NcclFigures> nccl;
  if (o.model == "nccl") {
    auto f = NcclFiguresFor("", c.name);
    if (!f.ok() || *op != sched::Collective::kAllReduce) {
      fmt::print(stderr, "weft-sim: --model nccl: {}\n",
                 f.ok() ? "allreduce only" : f.status().ToString());
      return 2;
    }
    nccl = *f;
  }
  PrintHeader(c, o);
  if (nccl)
    fmt::print("# model: NCCL reference, calibrated figures: base {:.1f} us, network hop {:.1f} us, "
               "NVLink hop {:.1f} us, NIC fraction {:.3f}, NVLink fraction {:.3f}{}\n#\n",
               nccl->base_us, nccl->net_hop_us, nccl->nvlink_hop_us, nccl->nic_fraction,
               nccl->nvlink_fraction, nccl->nvls ? ", NVLS" : "");
  else
    fmt::print("# planner chooses with WEFT_COST_MODEL={}\n#\n",
               costs.value_or(PlannerCostsFor(c)).ToSpec());
  const SymmetryMode mode = o.no_symmetry       ? SymmetryMode::kOff
                            : o.verify_symmetry ? SymmetryMode::kExhaustive
                                                : SymmetryMode::kAuto;
  std::vector<Row> rows;
  double bus_sum = 0;
  for (double b = static_cast<double>(*minb); b <= static_cast<double>(*maxb) * (1 + 1e-9);
       b *= o.factor) {
    CollectiveQuery q;
    q.coll = *op;
    q.bytes = static_cast<size_t>(b);
    q.dtype = *dtype;
    q.root = o.root;
    q.algo = o.algo;
    q.planner_costs = costs;
    const auto t0 = std::chrono::steady_clock::now();
    auto p = o.model == "nccl" ? PredictNccl(c, q, *nccl) : PredictCollective(c, q, mode);
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!p.ok()) {
      fmt::print(stderr, "weft-sim: {} bytes: {}\n", q.bytes, p.status().ToString());
      return 1;
    }
    if (!rows.empty() && rows.back().p.count == p->count) continue;  // same rounded size
    rows.push_back({q.bytes, *p, wall});
    bus_sum += p->busbw_gbps;
    fmt::print("{:>12}  {:>12}  {:>8}  {:>25}  {:>12.2f}  {:>8.2f}  {:>8.2f}  {:>16}  {:>8.1f}\n",
               q.bytes, p->count, DataTypeName(*dtype),
               // A pipelined schedule's segments after its name: "hierarchical_pipelined/4".
               p->segments > 1 ? fmt::format("{}/{}", p->algorithm, p->segments) : p->algorithm,
               p->seconds * 1e6,
               p->algbw_gbps, p->busbw_gbps,
               p->symmetry == "none" ? fmt::format("all {}", p->simulated_ranks) : p->symmetry,
               wall);
    if (o.explain && !p->reason.empty()) fmt::print("#   planner: {}\n", p->reason);
  }
  fmt::print("# Avg bus bandwidth    : {:g}\n#\n", rows.empty() ? 0.0 : bus_sum / rows.size());
  if (!o.json_path.empty() && !WriteJson(o.json_path, c, o, rows)) {
    fmt::print(stderr, "weft-sim: cannot write {}\n", o.json_path);
    return 1;
  }
  if (!o.plot_path.empty()) {
    Series s{fmt::format("{} x{}", c.name, c.hosts), {}, {}};
    for (const Row& r : rows) {
      s.x.push_back(static_cast<double>(r.bytes));
      s.y.push_back(r.p.busbw_gbps);
    }
    PlotSpec spec{
        fmt::format("weft-sim {} busbw, {} x {} ({} ranks)", o.collective, c.name, c.hosts,
                    c.ranks()),
        "message size (bytes)", "predicted busbw (GB/s)", true};
    if (!WritePlot(o.plot_path, spec, {s})) return 1;
  }
  return 0;
}

}  // namespace weft::sim::cli
