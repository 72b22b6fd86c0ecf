// Catalog instance + command-line overrides -> the cluster model.
#pragma once

#include "collective_cmd.h"
#include "core/status.h"
#include "sim/cluster.h"

namespace weft::sim::cli {

Result<ClusterSpec> BuildCluster(const ClusterOptions& o);

}  // namespace weft::sim::cli
