// The peers' registered buffers that this process has mapped, so that each is mapped once
// (MapPeerBuffer costs two syscalls and an mmap) and unmapped when the peer deregisters
// it, when the peer is gone, or when the cache (its communicator) is destroyed.
//
// A buffer is named by the peer's rank, its process id and its registration id (never
// reused by one registry, see comm/registry.h): a peer process that restarted under the
// same rank cannot be confused with its predecessor.
//
// Thread-safety: every method may be called from any thread. A pointer returned by Map
// stays valid until the matching Release / ReleasePeer / destruction.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

#include "core/mutex.h"
#include "core/status.h"
#include "transport/shm/shared_buffer.h"

namespace weft::transport::shm {

struct PeerBufferKey {
  int peer = -1;
  pid_t pid = 0;
  uint64_t registration = 0;
  bool operator<(const PeerBufferKey& o) const {
    return std::tie(peer, pid, registration) < std::tie(o.peer, o.pid, o.registration);
  }
};

class PeerBufferCache {
 public:
  // The base of the peer's buffer in this process: the cached mapping, or a new one of
  // `fd` of process `key.pid`, `bytes` long (MapPeerBuffer, whose errors it returns,
  // prefixed with the peer's rank). A cached mapping shorter than `bytes` is an error for
  // a weftMemAlloc memfd (sealed: its size never changes) and is mapped again for a tmpfs
  // file (which its owner may have grown).
  Result<void*> Map(const PeerBufferKey& key, int fd, size_t bytes,
                    Backing backing = Backing::kSealedMemfd) EXCLUDES(mu_);
  // Unmaps the buffer if it is mapped (the peer deregistered it). Idempotent.
  void Release(const PeerBufferKey& key) EXCLUDES(mu_);
  // Unmaps every buffer of `peer` (it failed or left).
  void ReleasePeer(int peer) EXCLUDES(mu_);
  size_t Count() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<PeerBufferKey, PeerMapping> mapped_ GUARDED_BY(mu_);
};

}  // namespace weft::transport::shm
