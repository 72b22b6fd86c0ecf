// Detecting the planner's inter-host figures when a communicator is created: which
// links (NICs) each rank uses to reach other hosts and how fast they are (the mesh's
// UsedLinks), exchanged among the ranks once and agreed on by one rule
// (link_figures.h), so that every rank plans with the same cost model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sched/cost_model.h"
#include "sched/schedule.h"
#include "transport/mesh.h"

namespace weft::comm {

// WEFT_DETECT_NICS: unset, "" or "1": detect; "0": keep the figures of WEFT_COST_MODEL
// and the defaults. InvalidArgument for anything else.
Result<bool> DetectNicsFromEnv();

// Collective over every rank of `mesh`, which must be connected and idle (no call has
// run on it yet): exchanges each rank's link report over the mesh (one allgather, wire
// kind kLinkDetection) and returns `costs` with the agreed inter_links and inter_gbps
// filled in where `given` (the keys of WEFT_COST_MODEL) does not name them. Returns
// `costs` as they are, exchanging nothing, when the ranks are on one host (the model
// weighs only traffic between hosts), when `detect` is false (WEFT_DETECT_NICS=0), or
// when `given` names both figures; every rank takes the same branch as long as the
// environment agrees, as every setting the planner reads must. Rank 0 logs the figures
// and where they came from at WEFT_DEBUG=INFO. Errors are the exchange's (a peer gone,
// a timeout after `timeout_s`). `sys_class`: net::kSysClassDir.
Result<sched::CostModel> DetectLinkFigures(transport::Mesh* mesh,
                                           std::shared_ptr<const sched::Topology> topology,
                                           const sched::CostModel& costs,
                                           const std::vector<std::string>& given, bool detect,
                                           double timeout_s, const std::string& sys_class);

}  // namespace weft::comm
