#include "reference_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster_build.h"
#include "collective_cmd.h"
#include "flags.h"
#include "nccl_cmd.h"
#include "sched/comma_list.h"
#include "sim/collective.h"
#include "sim/nccl_model.h"

namespace weft::sim::cli {
namespace {

struct Row {
  std::string instance;
  int nodes = 0;
  size_t bytes = 0;
  Prediction weft;
  NcclPrediction nccl;
  double ratio() const { return nccl.busbw_gbps > 0 ? weft.busbw_gbps / nccl.busbw_gbps : 0; }
};

std::string SizeName(size_t b) {
  for (const auto& [unit, suffix] : {std::pair<size_t, const char*>{size_t{1} << 30, "G"},
                                     {size_t{1} << 20, "M"},
                                     {size_t{1} << 10, "K"}}) {
    if (b >= unit && b % unit == 0) return fmt::format("{}{}", b / unit, suffix);
  }
  return std::to_string(b);
}

// "hierarchical_pipelined/4" for a pipelined schedule, else the name.
std::string Planned(const Prediction& p) {
  return p.segments > 1 ? fmt::format("{}/{}", p.algorithm, p.segments) : p.algorithm;
}

bool WriteJson(const std::string& path, const std::vector<Row>& rows) {
  nlohmann::json j;
  j["collective"] = "allreduce";
  j["dtype"] = "float32";
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    j["rows"].push_back({{"instance", r.instance},
                         {"nodes", r.nodes},
                         {"bytes", r.bytes},
                         {"weft_algorithm", r.weft.algorithm},
                         {"weft_segments", r.weft.segments},
                         {"weft_busbw_gbps", r.weft.busbw_gbps},
                         {"nccl_algorithm", fmt::format("{}/{}", NcclAlgoName(r.nccl.algo),
                                                        NcclProtoName(r.nccl.proto))},
                         {"nccl_busbw_gbps", r.nccl.busbw_gbps},
                         {"weft_over_nccl", r.ratio()}});
  }
  std::ofstream out(path);
  return static_cast<bool>(out << j.dump(2) << "\n");
}

}  // namespace

int RunNcclReference(const ReferenceOptions& o) {
  auto minb = ParseSizeFlag("-b/--minbytes", o.min_bytes);
  auto maxb = ParseSizeFlag("-e/--maxbytes", o.max_bytes);
  for (const Status& s : {minb.status(), maxb.status()}) {
    if (!s.ok()) fmt::print(stderr, "weft-sim: {}\n", s.message());
  }
  if (!minb.ok() || !maxb.ok()) return 2;
  if (*minb > *maxb || o.factor <= 1) {
    fmt::print(stderr, "weft-sim: compare --reference: need -b <= -e and -f > 1\n");
    return 2;
  }
  std::vector<int> node_counts;
  for (const std::string& n : sched::SplitCommas(o.nodes)) {
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || v < 1 || v > (1 << 20)) {
      fmt::print(stderr, "weft-sim: --nodes: '{}' is not a node count (1..1048576)\n", n);
      return 2;
    }
    node_counts.push_back(static_cast<int>(v));
  }
  std::vector<Row> rows;
  for (const std::string& instance : sched::SplitCommas(o.instances)) {
    auto figures = NcclFiguresFor("", instance);
    if (!figures.ok()) {
      fmt::print(stderr, "weft-sim: --reference nccl: {}\n", figures.status().ToString());
      return 2;
    }
    fmt::print(
        "# weft's planned allreduce against the NCCL reference on {} (float32 sum, busbw "
        "GB/s)\n# NCCL figures: base {:.1f} us, network hop {:.1f} us, NVLink hop {:.1f} "
        "us, NIC fraction {:.3f}, NVLink fraction {:.3f}{}\n",
        instance, figures->base_us, figures->net_hop_us, figures->nvlink_hop_us,
        figures->nic_fraction, figures->nvlink_fraction, figures->nvls ? ", NVLS" : "");
    fmt::print("#{:>6}  {:>6}  {:>38}  {:>8}  {:>22}  {:>8}  {:>9}\n", "nodes", "size",
               "weft (planned)", "busbw", "NCCL (reference)", "busbw", "weft/NCCL");
    for (int nodes : node_counts) {
      ClusterOptions co;
      co.catalog = o.catalog;
      co.instance = instance;
      co.nodes = nodes;
      auto cluster = BuildCluster(co);
      if (!cluster.ok()) {
        fmt::print(stderr, "weft-sim: {}\n", cluster.status().ToString());
        return 2;
      }
      double worst = std::numeric_limits<double>::infinity();
      size_t worst_bytes = 0;
      int level = 0, sizes = 0;
      for (double b = static_cast<double>(*minb); b <= static_cast<double>(*maxb) * (1 + 1e-9);
           b *= o.factor) {
        CollectiveQuery q;
        q.bytes = static_cast<size_t>(b);
        auto weft = PredictCollective(*cluster, q);
        if (!weft.ok()) {
          fmt::print(stderr, "weft-sim: {} nodes, {} bytes: {}\n", nodes, q.bytes,
                     weft.status().ToString());
          return 1;
        }
        Row row{instance, nodes, q.bytes, *weft,
                PredictNcclAllreduce(*cluster, *figures, static_cast<double>(q.bytes))};
        fmt::print("{:>7}  {:>6}  {:>38}  {:>8.2f}  {:>22}  {:>8.2f}  {:>9.2f}\n", nodes,
                   SizeName(row.bytes), Planned(row.weft), row.weft.busbw_gbps,
                   fmt::format("{}/{}", NcclAlgoName(row.nccl.algo), NcclProtoName(row.nccl.proto)),
                   row.nccl.busbw_gbps, row.ratio());
        if (row.ratio() < worst) worst = row.ratio(), worst_bytes = row.bytes;
        level += row.ratio() >= 1.0;
        ++sizes;
        rows.push_back(std::move(row));
      }
      fmt::print("# {} nodes: weft >= NCCL at {} of {} sizes; lowest weft/NCCL {:.2f} at {}\n",
                 nodes, level, sizes, worst, SizeName(worst_bytes));
    }
  }
  if (!o.json_path.empty() && !WriteJson(o.json_path, rows)) {
    fmt::print(stderr, "weft-sim: cannot write {}\n", o.json_path);
    return 1;
  }
  return 0;
}

}  // namespace weft::sim::cli
