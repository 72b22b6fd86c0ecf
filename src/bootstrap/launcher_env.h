// Who am I and where is the rendezvous store, from the environment of the launcher that
// started this process. Checked in order, the first that is complete wins:
//   weftrun:  WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_WORLD_SIZE,
//             WEFT_STORE_ADDR (host:port, served by weftrun itself)
//   torchrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   Slurm:    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE /
//             SLURM_TASKS_PER_NODE, + MASTER_ADDR/MASTER_PORT or the first host of
//             SLURM_STEP_NODELIST/SLURM_JOB_NODELIST and a port derived from SLURM_JOB_ID
//   Open MPI: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
//             OMPI_COMM_WORLD_LOCAL_SIZE, + MASTER_ADDR/MASTER_PORT or WEFT_STORE_ADDR
// WEFT_STORE_ADDR, when set, overrides the store address of any launcher; WEFT_STORE_PORT
// overrides the port. When no launcher provides a store, rank 0 hosts it
// (`host_store` is true on rank 0 only).
#pragma once

#include <map>
#include <string>

#include "core/status.h"

namespace weft::bootstrap {

struct LaunchInfo {
  std::string launcher;   // "weftrun", "torchrun", "slurm", "openmpi"
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string store_host;
  uint16_t store_port = 0;
  bool host_store = false;  // this process must start the store server
};

using EnvMap = std::map<std::string, std::string>;

// From the real environment.
Result<LaunchInfo> DetectLaunch();
// From an explicit map (for tests). InvalidArgument names the missing or malformed
// variable; when nothing is found the message lists what was looked for.
Result<LaunchInfo> DetectLaunch(const EnvMap& env);

// Expands the first host of a Slurm hostlist: "node[01-04,07],gpu5" -> "node01".
Result<std::string> FirstSlurmHost(const std::string& nodelist);

}  // namespace weft::bootstrap
