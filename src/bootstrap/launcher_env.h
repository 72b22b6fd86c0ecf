// Who am I and where is the rendezvous store, from the environment of the launcher that
// started this process. Checked in this order; the first whose rank and world-size
// variables are both set wins:
//   weftrun:  WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_WORLD_SIZE,
//             WEFT_STORE_ADDR (host:port, served by weftrun itself)
//   torchrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
//             When TORCHELASTIC_USE_AGENT_STORE=True, torchrun's agent already serves its
//             own TCPStore on MASTER_PORT, so weft's store uses MASTER_PORT+1.
//   Open MPI: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
//             OMPI_COMM_WORLD_LOCAL_SIZE, + MASTER_ADDR/MASTER_PORT or WEFT_STORE_ADDR.
//             Checked before Slurm: under mpirun inside an allocation SLURM_PROCID is the
//             index of Open MPI's daemon, not the rank.
//   MPICH / Intel MPI (Hydra mpiexec): PMI_RANK, PMI_SIZE, MPI_LOCALRANKID,
//             MPI_LOCALNRANKS, + MASTER_ADDR/MASTER_PORT or WEFT_STORE_ADDR.
//   Slurm:    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE /
//             SLURM_TASKS_PER_NODE (+ SLURM_NODEID), + MASTER_ADDR/MASTER_PORT, or else
//             the first host of SLURM_STEP_NODELIST/SLURM_JOB_NODELIST with port
//             SlurmStorePort(SLURM_JOB_ID, SLURM_STEP_ID) (every rank of a step derives the
//             same port).
//   PMIx:     last, PMIX_RANK, the size from OMPI_COMM_WORLD_SIZE, SLURM_NTASKS or
//             WORLD_SIZE, + MASTER_ADDR/MASTER_PORT or WEFT_STORE_ADDR.
// WEFT_STORE_ADDR, when set, overrides the store address of any launcher; WEFT_STORE_PORT
// overrides the port (of any source). When no launcher provides a store, rank 0 hosts it:
// `host_store` is true on rank 0 for every launcher except weftrun with WEFT_STORE_ADDR.
// Empty variables count as unset. Local rank/size default to 0/1 when absent.
// Errors (InvalidArgument, naming the variable): malformed or negative numbers, rank >=
// world size, local rank >= local world size, a half-set weftrun/Open MPI pair, no store
// address or port, a bad Slurm nodelist.
#pragma once

#include <map>
#include <string>

#include "core/status.h"

namespace weft::bootstrap {

struct LaunchInfo {
  std::string launcher;   // "weftrun", "torchrun", "openmpi", "mpich", "slurm", "pmix"
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

// The Slurm store port of a job step: 10000 + (job % 2000) * 10 + step % 10, which stays
// in 10000-29999, below the kernel's ephemeral range (launcher_env.cc says why).
uint16_t SlurmStorePort(long long job_id, long long step_id);

// Expands the first host of a Slurm hostlist: "node[01-04,07],gpu5" -> "node01".
Result<std::string> FirstSlurmHost(const std::string& nodelist);

}  // namespace weft::bootstrap
