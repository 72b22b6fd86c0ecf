// Parsing and checking the instance catalog (see catalog.h). nlohmann::json is used in
// its non-throwing form: parse(..., allow_exceptions=false) and explicit type checks.
#include "sim/catalog.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/data_dir.h"

namespace weft::sim {
namespace {

using nlohmann::json;

const std::set<std::string>& Statuses() {
  static const std::set<std::string> kStatuses = {"verified", "cited", "derived", "assumed",
                                                  "conflicting"};
  return kStatuses;
}

std::string StringOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Status ParseFigure(const std::string& where, const json& j, const Catalog& catalog, Figure* out) {
  if (!j.is_object()) return InvalidArgument(where + ": not an object");
  auto v = j.find("value");
  if (v == j.end()) return InvalidArgument(where + ": no value (use null when unpublished)");
  if (v->is_number()) {
    out->value = v->get<double>();
  } else if (!v->is_null()) {
    return InvalidArgument(where + ": value must be a number or null");
  }
  auto s = j.find("sources");
  if (s == j.end() || !s->is_array() || s->empty()) {
    return InvalidArgument(where + ": needs a non-empty 'sources' list");
  }
  for (const json& id : *s) {
    if (!id.is_string() || catalog.sources.count(id.get<std::string>()) == 0) {
      return InvalidArgument(
          fmt::format("{}: source {} is not defined in 'sources'", where, id.dump()));
    }
    out->sources.push_back(id.get<std::string>());
  }
  out->status = StringOr(j, "status");
  if (Statuses().count(out->status) == 0) {
    return InvalidArgument(fmt::format("{}: unknown status '{}'", where, out->status));
  }
  out->note = StringOr(j, "note");
  return Status::Ok();
}

}  // namespace

double Instance::Get(const std::string& key, double fallback) const {
  auto it = figures.find(key);
  return it != figures.end() && it->second.value ? *it->second.value : fallback;
}

std::map<std::string, std::optional<double>> PriceOptions(const Instance& instance) {
  constexpr std::string_view kPre = "price_", kSuf = "_usd_h";
  std::map<std::string, std::optional<double>> out;
  for (const auto& [key, fig] : instance.figures) {
    if (key.size() <= kPre.size() + kSuf.size() || key.rfind(kPre, 0) != 0 ||
        key.compare(key.size() - kSuf.size(), kSuf.size(), kSuf) != 0) {
      continue;
    }
    out[key.substr(kPre.size(), key.size() - kPre.size() - kSuf.size())] = fig.value;
  }
  return out;
}

const Instance* Catalog::Find(const std::string& name) const {
  for (const Instance& i : instances) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

const std::vector<std::string>& RequiredFigures() {
  static const std::vector<std::string> kRequired = {"accelerators",     "tflops_dense_bf16",
                                                     "hbm_gb",           "hbm_gbps",
                                                     "intra_gbps_bidir", "nics",
                                                     "network_gbit",     "price_on_demand_usd_h",
                                                     "alpha_intra_us",   "alpha_inter_us"};
  return kRequired;
}


Result<Catalog> LoadShippedCatalog() {
  WEFT_ASSIGN_OR_RETURN(const std::string path, ShippedDataPath("catalog/instances.json"));
  return LoadCatalog(path);
}

Result<Catalog> LoadCatalog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(fmt::format("cannot open catalog {}", path));
  std::stringstream text;
  text << in.rdbuf();
  const json root = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return InvalidArgument(fmt::format("{}: not valid JSON", path));
  }
  Catalog catalog;
  auto sources = root.find("sources");
  if (sources == root.end() || !sources->is_object()) {
    return InvalidArgument(fmt::format("{}: no 'sources' object", path));
  }
  for (auto it = sources->begin(); it != sources->end(); ++it) {
    Source s{StringOr(*it, "title"), StringOr(*it, "url"), StringOr(*it, "date"),
             StringOr(*it, "accessed")};
    if (s.title.empty() || s.url.empty()) {
      return InvalidArgument(
          fmt::format("{}: source '{}' needs a title and a url", path, it.key()));
    }
    catalog.sources[it.key()] = s;
  }
  auto instances = root.find("instances");
  if (instances == root.end() || !instances->is_array()) {
    return InvalidArgument(fmt::format("{}: no 'instances' list", path));
  }
  for (const json& j : *instances) {
    Instance inst;
    inst.name = StringOr(j, "name");
    inst.accelerator = StringOr(j, "accelerator");
    if (inst.name.empty()) return InvalidArgument(fmt::format("{}: an instance has no name", path));
    auto figs = j.find("figures");
    if (figs == j.end() || !figs->is_object()) {
      return InvalidArgument(fmt::format("{}: {} has no figures", path, inst.name));
    }
    for (auto f = figs->begin(); f != figs->end(); ++f) {
      Figure fig;
      WEFT_RETURN_IF_ERROR(ParseFigure(inst.name + "." + f.key(), *f, catalog, &fig));
      inst.figures[f.key()] = fig;
    }
    for (const auto& [key, fig] : inst.figures) {
      if (!fig.value || key.rfind("price_", 0) != 0 || key == "price_on_demand_usd_h") continue;
      bool dated = false;
      for (const std::string& id : fig.sources)
        dated = dated || !catalog.sources.at(id).date.empty();
      if (!dated) {
        return InvalidArgument(fmt::format(
            "{}: {}.{} has a value but no dated source (prices other than on-demand move)", path,
            inst.name, key));
      }
    }
    auto eff = inst.figures.find("efficiency");
    if (eff != inst.figures.end() && eff->second.value &&
        !(*eff->second.value > 0 && *eff->second.value <= 1)) {
      return InvalidArgument(fmt::format("{}: {}.efficiency must be in (0, 1]", path, inst.name));
    }
    for (const std::string& key : RequiredFigures()) {
      auto f = inst.figures.find(key);
      if (f == inst.figures.end()) {
        return InvalidArgument(fmt::format("{}: {} lacks figure '{}'", path, inst.name, key));
      }
      if (!f->second.value && key.rfind("price", 0) != 0) {
        return InvalidArgument(fmt::format("{}: {}.{} must have a value", path, inst.name, key));
      }
    }
    catalog.instances.push_back(std::move(inst));
  }
  return catalog;
}

Result<ClusterSpec> ClusterFor(const Instance& inst, int nodes) {
  ClusterSpec c;
  c.name = inst.name;
  c.hosts = nodes;
  c.accels_per_host = static_cast<int>(inst.Get("accelerators"));
  c.intra_bytes_per_s = inst.Get("intra_gbps_bidir") / 2 * 1e9;
  c.intra_alpha_s = inst.Get("alpha_intra_us") * 1e-6;
  c.nics_per_host = static_cast<int>(inst.Get("nics"));
  c.nic_bytes_per_s =
      c.nics_per_host > 0 ? inst.Get("network_gbit") / c.nics_per_host / 8 * 1e9 : 0;
  c.inter_alpha_s = inst.Get("alpha_inter_us") * 1e-6;
  const double hbm = inst.Get("hbm_gbps") * 1e9;
  c.reduce_s_per_byte = hbm > 0 ? 3.0 / hbm : 0;
  c.copy_s_per_byte = hbm > 0 ? 2.0 / hbm : 0;
  WEFT_RETURN_IF_ERROR(Validate(c));
  return c;
}

}  // namespace weft::sim
