// Everything a communicator reads from the environment, read and checked once at
// creation, so that a bad value fails the init with a clear error before any connection
// and nothing later consults the environment.
#pragma once

#include <string>
#include <vector>

#include "comm/call_check.h"
#include "core/deadline.h"
#include "core/status.h"
#include "sched/cost_model.h"
#include "transport/mesh.h"
#include "weft/weft.h"

namespace weft::comm {

// What the program asked of a communicator at init (weftCommInitRankConfig's config),
// checked: each field set here wins over the environment's.
struct CommOptions {
  double timeout_s = 0;  // 0: WEFT_TIMEOUT's
  std::string name;      // "" for none
};

// Checks weftCommInitRankConfig's `config` (nullptr: the defaults) and copies what it
// asks. InvalidArgument names the field, its value and what is accepted.
Result<CommOptions> OptionsFromConfig(const weftConfig_t* config);

struct CommConfig {
  double timeout_s = 0;  // CommOptions::timeout_s, else WEFT_TIMEOUT
  std::string name;      // CommOptions::name
  transport::TransportMode mode = transport::TransportMode::kAuto;  // WEFT_TRANSPORT
  sched::CostModel costs;                              // WEFT_COST_MODEL
  std::vector<std::string> given_costs;  // the keys WEFT_COST_MODEL sets: detection keeps them
  bool detect_nics = true;               // WEFT_DETECT_NICS
  std::string algo_override;             // WEFT_ALGO ("" for the planner's choice)
  CheckCalls check_calls = CheckCalls::kRooted;  // WEFT_CHECK_CALLS
  // This process's local rank and the number of ranks on its host from its launcher
  // (torchrun, Slurm, Open MPI, weftrun), or {-1, 0} where none says (a unique id passed
  // by hand): which ofi domains (NICs) its endpoints open, and how many. The
  // launcher's, not the communicator's: they are known before any exchange (the
  // endpoints' addresses go in the card exchanged once), and a process keeps its NICs in
  // every communicator it joins, split or not.
  int local_index = -1;
  int local_size = 0;

  // The environment's settings, with those `options` sets in their place.
  static Result<CommConfig> FromEnv(const CommOptions& options = {});
};

}  // namespace weft::comm
