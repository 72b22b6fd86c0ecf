// The instance catalog (sim/catalog/instances.json): public figures per instance type,
// each with its sources and a status, and the cluster model built from them.
//
// Figures keep their provenance so that reports can say which numbers are verified,
// cited, derived or assumed. Parsing never throws; a malformed file is an
// InvalidArgument that names the instance and the figure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/cluster.h"

namespace weft::sim {

struct Figure {
  std::optional<double> value;  // absent: not published (e.g. no on-demand price)
  std::vector<std::string> sources;
  std::string status;  // verified | cited | derived | assumed | conflicting
  std::string note;
};

struct Source {
  std::string title;
  std::string url;
};

struct Instance {
  std::string name;
  std::string accelerator;
  std::map<std::string, Figure> figures;
  // The value of a figure, or `fallback` when absent.
  double Get(const std::string& key, double fallback = 0) const;
};

struct Catalog {
  std::map<std::string, Source> sources;
  std::vector<Instance> instances;
  const Instance* Find(const std::string& name) const;
};

// Figures every instance must carry (prices may have a null value).
const std::vector<std::string>& RequiredFigures();

// Loads and checks a catalog: every required figure present, every figure with at least
// one source that the file defines and a known status.
Result<Catalog> LoadCatalog(const std::string& path);
// The catalog shipped with the sources.
std::string DefaultCatalogPath();

// The cluster model of `nodes` instances. Derivations (documented in SIMULATOR.md):
// intra-node bandwidth per direction = intra_gbps_bidir / 2; per-NIC bandwidth =
// network_gbit / nics / 8; reduction gamma = 3 bytes of HBM traffic per reduced byte
// (read two operands, write one) / hbm_gbps; copy = 2 bytes per copied byte / hbm_gbps.
Result<ClusterSpec> ClusterFor(const Instance& instance, int nodes);

}  // namespace weft::sim
