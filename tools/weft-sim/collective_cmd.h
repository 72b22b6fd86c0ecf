// `weft-sim collective`: an nccl-tests-like table of predicted times for one collective
// over a range of sizes on N instances of a catalog type.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>

namespace weft::sim::cli {

struct ClusterOptions {
  std::string catalog;  // empty: the shipped one
  std::string instance = "p4d.24xlarge";
  int nodes = 1;
  std::string nic_policy = "rail";
  double oversubscription = 1.0;
  int hosts_per_leaf = 1;
  // Overrides of catalog figures, e.g. to model a tc-shaped test bed.
  std::optional<double> alpha_intra_us, alpha_inter_us, nic_gbit;
  std::optional<int> nics;
  // A cluster not in the catalog: --instance custom (figures from the options below and
  // the overrides above) or --cluster-file FILE.json (sim/custom_cluster.h).
  std::string cluster_file;
  std::optional<int> accels_per_host;
  std::optional<double> mem_gbps;
};

struct CollectiveOptions {
  ClusterOptions cluster;
  std::string collective = "allreduce";
  std::string dtype = "float";
  std::string min_bytes = "1K", max_bytes = "1G";
  double factor = 2;
  int root = 0;
  std::string algo;
  std::string model = "weft";  // weft: weft's planned schedule; nccl: the NCCL reference
  std::string cost_model;  // "" : the cluster's figures; "default": weft's; else a spec
  std::string json_path;
  std::string plot_path;
  bool no_symmetry = false;
  bool verify_symmetry = false;
  bool explain = false;  // print the planner's reason under each row
};

// Adds the cluster options shared by subcommands.
void AddClusterOptions(CLI::App* cmd, ClusterOptions* o);
CLI::App* AddCollectiveCommand(CLI::App* app, CollectiveOptions* o);
int RunCollective(const CollectiveOptions& o);

}  // namespace weft::sim::cli
