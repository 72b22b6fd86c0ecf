// Custom clusters from a few figures (see custom_cluster.h). Non-throwing JSON parsing.
#include "sim/custom_cluster.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace weft::sim {

Result<ClusterSpec> CustomCluster(const CustomFigures& f, int nodes) {
  if (!(f.nic_gbit > 0)) {
    return InvalidArgument("custom cluster: the NIC bandwidth (nic_gbit, --nic-gbit) is required");
  }
  if (f.mem_gbps < 0) return InvalidArgument("custom cluster: mem_gbps must be >= 0");
  ClusterSpec c;
  c.name = f.name;
  c.hosts = nodes;
  c.accels_per_host = f.accels_per_host;
  c.nics_per_host = f.nics_per_host;
  c.nic_bytes_per_s = f.nic_gbit / 8 * 1e9;
  c.inter_alpha_s = f.inter_alpha_us * 1e-6;
  c.intra_bytes_per_s = f.intra_gbps * 1e9;
  c.intra_alpha_s = f.intra_alpha_us * 1e-6;
  c.reduce_s_per_byte = f.mem_gbps > 0 ? 3.0 / (f.mem_gbps * 1e9) : 0;
  c.copy_s_per_byte = f.mem_gbps > 0 ? 2.0 / (f.mem_gbps * 1e9) : 0;
  WEFT_RETURN_IF_ERROR(Validate(c));
  return c;
}

Result<CustomFigures> ParseCustomFigures(const std::string& text, CustomFigures f) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("custom cluster: not a JSON object");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name") {
      if (!it->is_string()) return InvalidArgument("custom cluster: name must be a string");
      f.name = it->get<std::string>();
      continue;
    }
    if (!it->is_number()) {
      return InvalidArgument(fmt::format("custom cluster: '{}' must be a number", k));
    }
    const double v = it->get<double>();
    if (k == "accels_per_host") {
      f.accels_per_host = static_cast<int>(v);
    } else if (k == "nics_per_host") {
      f.nics_per_host = static_cast<int>(v);
    } else if (k == "nic_gbit") {
      f.nic_gbit = v;
    } else if (k == "inter_alpha_us") {
      f.inter_alpha_us = v;
    } else if (k == "intra_gbps") {
      f.intra_gbps = v;
    } else if (k == "intra_alpha_us") {
      f.intra_alpha_us = v;
    } else if (k == "mem_gbps") {
      f.mem_gbps = v;
    } else {
      return InvalidArgument(fmt::format("custom cluster: unknown key '{}'", k));
    }
  }
  return f;
}

}  // namespace weft::sim
