// The ways a communicator comes into being: from a unique id passed out of band (NCCL
// style), or from the launcher's environment (weftrun, torchrun, Slurm, Open MPI).
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "core/deadline.h"
#include "core/status.h"
#include "weft/weft.h"

namespace weft::comm {

// Starts a rendezvous store in this process (kept until exit) and describes it in `id`.
Status NewUniqueId(weftUniqueId* id);
// `options`: weftCommInitRankConfig's, checked (OptionsFromConfig).
Result<std::unique_ptr<Communicator>> InitRank(int nranks, const weftUniqueId& id, int rank,
                                               const CommOptions& options = {});
Result<std::unique_ptr<Communicator>> InitFromEnv();

// Collective over `size` ranks: builds a communicator whose mesh exchanges its cards
// through the store client of `bootstrap` under the fresh key prefix `prefix` (init, and
// weftCommShrink, whose parent's links may be dead). Bounded by `deadline`.
Result<std::unique_ptr<Communicator>> CreateThroughStore(Communicator::Bootstrap bootstrap,
                                                         const std::string& prefix,
                                                         uint64_t comm_id, int rank, int size,
                                                         Deadline deadline,
                                                         const CommOptions& options = {});

}  // namespace weft::comm
