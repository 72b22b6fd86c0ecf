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
  std::string date;      // when the figure was published or in effect (optional)
  std::string accessed;  // when it was read for this catalog (optional)
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

// The purchase options of an instance: "on_demand", "spot", ... for every figure named
// price_<option>_usd_h, with its value (absent: no published figure).
std::map<std::string, std::optional<double>> PriceOptions(const Instance& instance);

// Loads and checks a catalog: every required figure present, every figure with at least
// one source that the file defines and a known status. Prices other than on-demand move
// (spot every few minutes, Capacity Blocks quarterly), so a price_* figure other than
// price_on_demand_usd_h that has a value must cite a source with a date.
Result<Catalog> LoadCatalog(const std::string& path);
// LoadCatalog of the shipped catalog (catalog/instances.json, found as data_dir.h says).
Result<Catalog> LoadShippedCatalog();

// The cluster model of `nodes` instances. Derivations (documented in SIMULATOR.md):
// intra-node bandwidth per direction = intra_gbps_bidir / 2; per-NIC bandwidth =
// network_gbit / nics / 8; reduction gamma = 3 bytes of HBM traffic per reduced byte
// (read two operands, write one) / hbm_gbps; copy = 2 bytes per copied byte / hbm_gbps.
Result<ClusterSpec> ClusterFor(const Instance& instance, int nodes);

}  // namespace weft::sim
