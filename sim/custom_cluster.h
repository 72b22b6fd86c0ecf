// A cluster that is not in the catalog: a test bed (tc-shaped namespaces), an on-prem
// machine room. Described by a few figures, on the command line or in a JSON file:
//
//   {"name": "netns-1gbit", "accels_per_host": 1, "nics_per_host": 1, "nic_gbit": 0.956,
//    "inter_alpha_us": 60, "intra_gbps": 10, "intra_alpha_us": 5, "mem_gbps": 10}
//
// Every key is optional except nic_gbit. nic_gbit is per NIC and per direction, as the
// payload sees it (subtract framing: TCP over 1500-byte Ethernet carries 1448/1514 of
// the line rate). mem_gbps sets the local costs as ClusterFor does for HBM: gamma = 3
// bytes of memory traffic per reduced byte / mem_gbps, copy = 2 / mem_gbps.
#pragma once

#include <string>

#include "core/status.h"
#include "sim/cluster.h"

namespace weft::sim {

struct CustomFigures {
  std::string name = "custom";
  int accels_per_host = 1;
  int nics_per_host = 1;
  double nic_gbit = 0;         // required (> 0)
  double inter_alpha_us = 50;  // a TCP round through the kernel on a LAN
  double intra_gbps = 10;      // per direction, per rank (shm copies on a CPU host)
  double intra_alpha_us = 5;
  double mem_gbps = 10;  // 0: reductions and copies are free
};

// The model of `nodes` hosts with these figures (checked by Validate).
Result<ClusterSpec> CustomCluster(const CustomFigures& f, int nodes);
// Parses the JSON above over `base` (keys absent keep base's values). Unknown keys are
// an error: a typo must not silently leave a default in place.
Result<CustomFigures> ParseCustomFigures(const std::string& json_text, CustomFigures base = {});

}  // namespace weft::sim
