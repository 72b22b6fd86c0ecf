// The ways a communicator comes into being: from a unique id passed out of band (NCCL
// style), or from the launcher's environment (weftrun, torchrun, Slurm, Open MPI).
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "core/status.h"
#include "weft/weft.h"

namespace weft::comm {

// Starts a rendezvous store in this process (kept until exit) and describes it in `id`.
Status NewUniqueId(weftUniqueId* id);
Result<std::unique_ptr<Communicator>> InitRank(int nranks, const weftUniqueId& id, int rank);
Result<std::unique_ptr<Communicator>> InitFromEnv();

}  // namespace weft::comm
