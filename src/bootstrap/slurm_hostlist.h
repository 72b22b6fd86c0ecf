// Slurm's compact list syntaxes, parsed without calling scontrol (compute nodes may not
// have it, and a subprocess per rank at start-up is slow).
#pragma once

#include <string>

#include "core/status.h"

namespace weft::bootstrap {

// SLURM_TASKS_PER_NODE ("2(x3),1": 2 tasks on each of 3 nodes, then 1) -> the count for
// node `node_index`. InvalidArgument (naming the variable) when malformed or too short.
Result<int> SlurmTasksOnNode(const std::string& tasks_per_node, int node_index);

}  // namespace weft::bootstrap
