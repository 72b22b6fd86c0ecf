#include "comm/comm_config.h"

#include "bootstrap/launcher_env.h"
#include "comm/detect_links.h"
#include "comm/flight_recorder.h"
#include "core/env.h"
#include "core/log.h"
#include "sched/planner.h"

namespace weft::comm {

Result<CommConfig> CommConfig::FromEnv() {
  CommConfig c;
  // Read elsewhere (the logger, the recorder, the device layer) where no error can be
  // returned; checked here so a malformed value fails init with its name.
  WEFT_RETURN_IF_ERROR(CheckLogLevelEnv());
  WEFT_RETURN_IF_ERROR(FlightRecorder::EntriesFromEnv().status());
  WEFT_RETURN_IF_ERROR(GetEnvChoice("WEFT_CUDA", "1", {"0", "1"}).status());
  WEFT_ASSIGN_OR_RETURN(c.timeout_s, TimeoutSeconds());
  WEFT_ASSIGN_OR_RETURN(c.mode, transport::TransportModeFromEnv());
  WEFT_ASSIGN_OR_RETURN(
      c.costs, sched::CostModel::Parse(GetEnv("WEFT_COST_MODEL").value_or(""), &c.given_costs));
  WEFT_ASSIGN_OR_RETURN(c.detect_nics, DetectNicsFromEnv());
  c.algo_override = GetEnv("WEFT_ALGO").value_or("");
  // A planner is built here only to check WEFT_ALGO now, before connecting; the
  // communicator builds its own with the detected link figures.
  WEFT_RETURN_IF_ERROR(sched::Planner::Create(c.algo_override, c.costs).status());
  WEFT_ASSIGN_OR_RETURN(c.check_calls, ParseCheckCalls(GetEnv("WEFT_CHECK_CALLS").value_or("")));
  Result<bootstrap::LaunchInfo> launch = bootstrap::DetectLaunch();
  if (launch.ok()) {
    c.local_index = launch->local_rank;
    c.local_size = launch->local_world_size;
  }
  return c;
}

}  // namespace weft::comm
