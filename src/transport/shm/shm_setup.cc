#include "transport/shm/shm_setup.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "transport/shm/cma.h"
#include "transport/shm/segment.h"
#include "transport/shm/shm_link.h"

namespace weft::transport::shm {

Result<std::vector<std::unique_ptr<Link>>> ConnectShmPeers(int self, uint64_t comm_id,
                                                           const std::vector<int>& peers,
                                                           const Deadline& deadline) {
  std::vector<std::unique_ptr<Link>> links;
  if (peers.empty()) return links;
  WEFT_ASSIGN_OR_RETURN(uint64_t ring_bytes, RingBytesFromEnv());
  WEFT_ASSIGN_OR_RETURN(uint64_t cma_threshold, CmaThresholdFromEnv());
  WEFT_ASSIGN_OR_RETURN(uint64_t rewind_bytes, RewindBytesFromEnv());
  WEFT_ASSIGN_OR_RETURN(bool wake, WakeFromEnv());
  // Three phases in this order so no rank ever waits for one that is itself waiting:
  // creating never waits; opening waits only for a creation; waiting for attachment
  // waits only for an open.
  std::vector<std::pair<int, std::unique_ptr<Segment>>> segments;
  for (int peer : peers) {
    if (peer <= self) continue;
    WEFT_ASSIGN_OR_RETURN(auto seg,
                          Segment::Create(comm_id, self, peer, ring_bytes, cma_threshold));
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
  // Two more phases for single-copy transfers: each side probes whether it may read the
  // peer's memory (never waits), then waits for the peer's verdict (which never waits).
  for (auto& [peer, seg] : segments) {
    const SideInfo& other = seg->peer_info();
    bool works = seg->header()->cma_threshold > 0 && other.pid_ns != 0 &&
                 other.pid_ns == seg->my_info().pid_ns &&
                 CmaProbe(other.pid.load(), other.probe_addr);
    // Release: pairs with the peer's acquire below (the verdict is all it publishes).
    seg->my_info().cma_state.store(works ? kCmaWorks : kCmaDenied, std::memory_order_release);
  }
  for (auto& [peer, seg] : segments) {
    while (seg->peer_info().cma_state.load(std::memory_order_acquire) == kCmaUnknown) {
      if (deadline.expired())
        return DeadlineExceeded(fmt::format(
            "rank {}: timed out waiting for rank {} to finish shared memory set-up", self, peer));
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  for (auto& [peer, seg] : segments) {
    bool both = seg->my_info().cma_state.load() == kCmaWorks &&
                seg->peer_info().cma_state.load() == kCmaWorks;
    uint64_t threshold = both ? seg->header()->cma_threshold : 0;
    links.push_back(std::make_unique<ShmLink>(self, peer, std::move(seg), threshold,
                                              rewind_bytes, wake));
  }
  return links;
}

}  // namespace weft::transport::shm
