// Setting up the shm links of a mesh: segments are created by the lower rank of each
// pair, opened by the higher, and unlinked once both are attached (see segment.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "transport/link.h"

namespace weft::transport::shm {

// Collective among the ranks in `peers` (all on this host) and `self`: every one of them
// must call it with the same comm_id. Never waits on anything but those peers' calls,
// so it cannot deadlock with other setup work. Bounded by `deadline`. Ring size per
// direction: WEFT_SHM_RING_BYTES (read by the creating rank).
Result<std::vector<std::unique_ptr<Link>>> ConnectShmPeers(int self, uint64_t comm_id,
                                                           const std::vector<int>& peers,
                                                           const Deadline& deadline);

}  // namespace weft::transport::shm
