#include "transport/shm/peer_buffers.h"

#include <fmt/format.h>

namespace weft::transport::shm {

Result<void*> PeerBufferCache::Map(const PeerBufferKey& key, int fd, size_t bytes,
                                   Backing backing) {
  MutexLock lock(&mu_);
  auto it = mapped_.find(key);
  if (it != mapped_.end() && it->second.bytes() < bytes && backing == Backing::kShmFile) {
    mapped_.erase(it);
    it = mapped_.end();
  }
  if (it != mapped_.end()) {
    if (it->second.bytes() < bytes) {
      return InvalidArgument(fmt::format(
          "rank {}'s registration {} is {} bytes mapped, {} asked for", key.peer,
          key.registration, it->second.bytes(), bytes));
    }
    return it->second.base();
  }
  // Mapped under the lock: two threads asking for the same buffer map it once.
  auto m = MapPeerBuffer(key.pid, fd, bytes, backing);
  if (!m.ok()) {
    return m.status().WithContext(
        fmt::format("mapping rank {}'s registered buffer {}", key.peer, key.registration));
  }
  void* base = m->base();
  mapped_.emplace(key, std::move(m).value());
  return base;
}

void PeerBufferCache::Release(const PeerBufferKey& key) {
  MutexLock lock(&mu_);
  mapped_.erase(key);
}

void PeerBufferCache::ReleasePeer(int peer) {
  MutexLock lock(&mu_);
  for (auto it = mapped_.begin(); it != mapped_.end();) {
    if (it->first.peer == peer)
      it = mapped_.erase(it);
    else
      ++it;
  }
}

size_t PeerBufferCache::Count() const {
  MutexLock lock(&mu_);
  return mapped_.size();
}

}  // namespace weft::transport::shm
