// `weft-sim catalog`: the instance figures with their status and sources; plus the
// cluster options and their translation into a model, shared by every subcommand.
#include "catalog_cmd.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "cluster_build.h"
#include "flags.h"
#include "sim/catalog.h"
#include "sim/custom_cluster.h"

namespace weft::sim::cli {

void AddClusterOptions(CLI::App* cmd, ClusterOptions* o) {
  cmd->add_option("--catalog", o->catalog, "instance catalog JSON (default: the shipped one)");
  cmd->add_option("-i,--instance", o->instance, "instance type from the catalog")
      ->capture_default_str();
  cmd->add_option("-N,--nodes", o->nodes, "number of instances")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  RefuseOption(cmd, "-n", kNodesNotN);
  cmd->add_option("--nic-policy", o->nic_policy,
                  "rail: a rank uses its own NIC(s); stripe: a rank's messages spread over all "
                  "NICs of its host")
      ->check(CLI::IsMember({"rail", "stripe"}))
      ->capture_default_str();
  cmd->add_option("--oversubscription", o->oversubscription,
                  "fabric oversubscription above each leaf (1: non-blocking)")
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--hosts-per-leaf", o->hosts_per_leaf, "hosts under one leaf switch")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--alpha-intra-us", o->alpha_intra_us, "override: intra-node latency");
  cmd->add_option("--alpha-inter-us", o->alpha_inter_us, "override: inter-node latency");
  cmd->add_option("--nic-gbit", o->nic_gbit, "override: Gbit/s per NIC");
  cmd->add_option("--nics", o->nics, "override: NICs per node");
  cmd->add_option("--cluster-file", o->cluster_file,
                  "a custom cluster's figures as JSON (see docs/SIMULATOR.md); implies "
                  "--instance custom");
  cmd->add_option("--accels-per-host", o->accels_per_host, "custom cluster: ranks per host")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--mem-gbps", o->mem_gbps,
                  "custom cluster: memory bandwidth (GB/s) for reductions and copies");
}

namespace {

// --instance custom / --cluster-file: the figures, then the command-line overrides.
Result<ClusterSpec> BuildCustom(const ClusterOptions& o) {
  CustomFigures f;
  if (!o.cluster_file.empty()) {
    std::ifstream in(o.cluster_file);
    if (!in) return InvalidArgument(fmt::format("cannot open {}", o.cluster_file));
    std::stringstream text;
    text << in.rdbuf();
    WEFT_ASSIGN_OR_RETURN(f, ParseCustomFigures(text.str()));
  }
  if (o.nic_gbit) f.nic_gbit = *o.nic_gbit;
  if (o.nics) f.nics_per_host = *o.nics;
  if (o.alpha_inter_us) f.inter_alpha_us = *o.alpha_inter_us;
  if (o.alpha_intra_us) f.intra_alpha_us = *o.alpha_intra_us;
  if (o.accels_per_host) f.accels_per_host = *o.accels_per_host;
  if (o.mem_gbps) f.mem_gbps = *o.mem_gbps;
  WEFT_ASSIGN_OR_RETURN(ClusterSpec c, CustomCluster(f, o.nodes));
  c.nic_policy = o.nic_policy == "stripe" ? NicPolicy::kStripe : NicPolicy::kRail;
  c.oversubscription = o.oversubscription;
  c.hosts_per_leaf = o.hosts_per_leaf;
  WEFT_RETURN_IF_ERROR(Validate(c));
  return c;
}

}  // namespace

Result<ClusterSpec> BuildCluster(const ClusterOptions& o) {
  if (o.instance == "custom" || !o.cluster_file.empty()) return BuildCustom(o);
  WEFT_ASSIGN_OR_RETURN(Catalog cat,
                        o.catalog.empty() ? LoadShippedCatalog() : LoadCatalog(o.catalog));
  const Instance* inst = cat.Find(o.instance);
  if (inst == nullptr) {
    std::string names;
    for (const Instance& i : cat.instances) names += (names.empty() ? "" : ", ") + i.name;
    return InvalidArgument(
        fmt::format("unknown instance '{}'; the catalog has: {}", o.instance, names));
  }
  WEFT_ASSIGN_OR_RETURN(ClusterSpec c, ClusterFor(*inst, o.nodes));
  c.nic_policy = o.nic_policy == "stripe" ? NicPolicy::kStripe : NicPolicy::kRail;
  c.oversubscription = o.oversubscription;
  c.hosts_per_leaf = o.hosts_per_leaf;
  if (o.alpha_intra_us) c.intra_alpha_s = *o.alpha_intra_us * 1e-6;
  if (o.alpha_inter_us) c.inter_alpha_s = *o.alpha_inter_us * 1e-6;
  if (o.nics) c.nics_per_host = *o.nics;
  if (o.nic_gbit) c.nic_bytes_per_s = *o.nic_gbit / 8 * 1e9;
  WEFT_RETURN_IF_ERROR(Validate(c));
  return c;
}

CLI::App* AddCatalogCommand(CLI::App* app, CatalogOptions* o) {
  CLI::App* cmd = app->add_subcommand("catalog", "list instance figures with status and sources");
  cmd->add_option("--catalog", o->catalog, "instance catalog JSON (default: the shipped one)");
  cmd->add_option("-i,--instance", o->instance, "only this instance");
  cmd->add_flag("--sources", o->show_sources, "print each source's title and URL");
  return cmd;
}

int RunCatalog(const CatalogOptions& o) {
  auto cat = o.catalog.empty() ? LoadShippedCatalog() : LoadCatalog(o.catalog);
  if (!cat.ok()) {
    fmt::print(stderr, "weft-sim: {}\n", cat.status().ToString());
    return 2;
  }
  for (const Instance& inst : cat->instances) {
    if (!o.instance.empty() && inst.name != o.instance) continue;
    fmt::print("{} ({})\n", inst.name, inst.accelerator);
    for (const auto& [key, f] : inst.figures) {
      const std::string v = f.value ? fmt::format("{:g}", *f.value) : "n/a";
      std::string srcs;
      for (const std::string& s : f.sources) srcs += (srcs.empty() ? "" : ",") + s;
      fmt::print("  {:<28} {:>10}  {:<11} {}{}\n", key, v, f.status, srcs,
                 f.note.empty() ? "" : "  -- " + f.note);
    }
  }
  if (o.show_sources) {
    fmt::print("\nsources:\n");
    for (const auto& [id, s] : cat->sources) {
      fmt::print("  {:<28} {}\n  {:<28} {}\n", id, s.title, "", s.url);
      if (!s.date.empty() || !s.accessed.empty()) {
        fmt::print("  {:<28} date: {}; accessed: {}\n", "", s.date.empty() ? "-" : s.date,
                   s.accessed.empty() ? "-" : s.accessed);
      }
    }
  }
  return 0;
}

}  // namespace weft::sim::cli
