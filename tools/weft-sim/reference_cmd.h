// `weft-sim compare --reference nccl`: weft's planned allreduce against the calibrated NCCL
// reference (sim/nccl_model.h) on the same cluster, size by size, for each instance type
// and node count asked for; the ratio of their busbw and, per node count, where weft falls
// short of it.
#pragma once

#include <string>

namespace weft::sim::cli {

struct ReferenceOptions {
  std::string catalog;    // empty: the shipped one
  std::string instances;  // comma-separated
  std::string nodes;      // comma-separated node counts
  std::string min_bytes = "1M", max_bytes = "8G";
  double factor = 4;
  std::string json_path;  // empty: none
};

// 0 on success, 1 when a prediction fails, 2 on bad options.
int RunNcclReference(const ReferenceOptions& o);

}  // namespace weft::sim::cli
