#include "comm/comm_config.h"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "bootstrap/launcher_env.h"
#include "comm/detect_links.h"
#include "comm/flight_recorder.h"
#include "core/env.h"
#include "core/log.h"
#include "sched/planner.h"

namespace weft::comm {

Result<CommOptions> OptionsFromConfig(const weftConfig_t* config) {
  CommOptions o;
  if (config == nullptr) return o;
  // The layout checks first: past them the fields can be read at all.
  if (config->size != sizeof(weftConfig_t)) {
    return InvalidArgument(fmt::format(
        "weftConfig_t.size is {}, but this library's weftConfig_t has {} bytes: start from "
        "WEFT_CONFIG_INITIALIZER and build against this weft.h",
        config->size, sizeof(weftConfig_t)));
  }
  if (config->magic != WEFT_CONFIG_MAGIC) {
    return InvalidArgument(fmt::format(
        "weftConfig_t.magic is {:#x}, not WEFT_CONFIG_MAGIC ({:#x}): start from "
        "WEFT_CONFIG_INITIALIZER", config->magic, WEFT_CONFIG_MAGIC));
  }
  if (config->version > WEFT_VERSION_CODE) {
    return InvalidArgument(fmt::format(
        "weftConfig_t.version is {}, newer than this library ({}): build against its weft.h",
        config->version, WEFT_VERSION_CODE));
  }
  if (config->timeout_ms < 0) {
    return InvalidArgument(fmt::format(
        "weftConfig_t.timeout_ms is {}: give a positive number of milliseconds, or 0 for "
        "WEFT_TIMEOUT", config->timeout_ms));
  }
  if (config->blocking != 1) {
    return InvalidArgument(fmt::format(
        "weftConfig_t.blocking is {}: only 1 is accepted (non-blocking communicators are "
        "not supported; use the weftI* calls for non-blocking operations)", config->blocking));
  }
  o.timeout_s = static_cast<double>(config->timeout_ms) / 1000.0;
  if (config->name != nullptr) {
    // Bounded: the name need not be terminated within any particular length.
    size_t len = strnlen(config->name, WEFT_COMM_NAME_MAX);
    if (len >= WEFT_COMM_NAME_MAX) {
      return InvalidArgument(fmt::format(
          "weftConfig_t.name is longer than {} bytes (WEFT_COMM_NAME_MAX - 1): \"{}...\"",
          WEFT_COMM_NAME_MAX - 1, std::string_view(config->name, 32)));
    }
    o.name.assign(config->name, len);
  }
  return o;
}

Result<CommConfig> CommConfig::FromEnv(const CommOptions& options) {
  CommConfig c;
  // Read elsewhere (the logger, the recorder, the device layer) where no error can be
  // returned; checked here so a malformed value fails init with its name.
  WEFT_RETURN_IF_ERROR(CheckLogLevelEnv());
  WEFT_RETURN_IF_ERROR(FlightRecorder::EntriesFromEnv().status());
  WEFT_RETURN_IF_ERROR(GetEnvChoice("WEFT_CUDA", "1", {"0", "1"}).status());
  // WEFT_TIMEOUT is checked even when the program's timeout replaces it: a malformed
  // value is a mistake to report, whichever wins.
  WEFT_ASSIGN_OR_RETURN(c.timeout_s, TimeoutSeconds());
  if (options.timeout_s > 0) c.timeout_s = options.timeout_s;
  c.name = options.name;
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
