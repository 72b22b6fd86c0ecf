#include "transport/shm/shm_setup.h"

#include "transport/shm/segment.h"
#include "transport/shm/shm_link.h"

namespace weft::transport::shm {

Result<std::vector<std::unique_ptr<Link>>> ConnectShmPeers(int self, uint64_t comm_id,
                                                           const std::vector<int>& peers,
                                                           const Deadline& deadline) {
  std::vector<std::unique_ptr<Link>> links;
  if (peers.empty()) return links;
  WEFT_ASSIGN_OR_RETURN(uint64_t ring_bytes, RingBytesFromEnv());
  // Three phases in this order so no rank ever waits for one that is itself waiting:
  // creating never waits; opening waits only for a creation; waiting for attachment
  // waits only for an open.
  std::vector<std::pair<int, std::unique_ptr<Segment>>> segments;
  for (int peer : peers) {
    if (peer <= self) continue;
    WEFT_ASSIGN_OR_RETURN(auto seg, Segment::Create(comm_id, self, peer, ring_bytes));
    segments.emplace_back(peer, std::move(seg));
  }
  for (int peer : peers) {
    if (peer >= self) continue;
    WEFT_ASSIGN_OR_RETURN(auto seg, Segment::Open(comm_id, self, peer, deadline));
    segments.emplace_back(peer, std::move(seg));
  }
  for (auto& [peer, seg] : segments) {
    if (seg->side() == 0) WEFT_RETURN_IF_ERROR(seg->WaitPeerAttached(deadline));
  }
  for (auto& [peer, seg] : segments)
    links.push_back(std::make_unique<ShmLink>(self, peer, std::move(seg)));
  return links;
}

}  // namespace weft::transport::shm
