// Collectives on registered buffers (weftMemAlloc + weftCommRegister, docs/TRANSPORTS.md
// "Registered buffers"): when every rank's input and output of a call are registered, the
// ranks of one host run a schedule that reads and writes the peers' buffers in place
// (sched kPeer* steps: the single_pass algorithms) instead of passing the bytes
// through the shm rings.
//
// All ranks must take the same path, so the choice is collective. For a call the path
// considers (Considers: the same answer on every rank, from the call's arguments and the
// links), each rank offers its buffers (Link::SetOffer: memfd, registration, offset, or
// "not registered") and raises a flag to every peer. A rank whose own buffers are not
// registered knows the call is plain and goes on at once: it takes the peers' flags at
// its next agreement. A rank whose buffers are registered waits for every peer's flag
// and reads every offer. Every such rank sees the same offers and decides alike: all
// registered, the peers' buffers are mapped (PeerBufferCache, once per registration) and
// the registered schedule runs, its first flag exchange already done by the agreement
// (ExecContext::entered_together); otherwise the call falls back to the plain path on
// every rank, and a rank that had registered its buffers says so at INFO. So calls on
// plain buffers pay a flag's store and a look at the peers' flags, not a round trip.
// A rank learns nothing when a peer deregisters or frees a buffer, so it keeps only the
// kKeepPerPeer buffers of each peer it used last mapped (the last call's input and
// output): an older one is unmapped, and its memory, if freed by its owner, goes back to
// the system then. A loop alternating between buffer sets maps them again on each call.
// The offers stay valid until read: two slots, by the agreement's parity, and a rank
// writes one only after every peer has raised its flag for the agreement before.
//
// Not thread-safe: the communicator uses it under its execution lock.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comm/call.h"
#include "comm/registry.h"
#include "core/status.h"
#include "exec/executor.h"
#include "sched/schedule.h"
#include "transport/mesh.h"
#include "transport/shm/peer_buffers.h"

namespace weft::comm {

class RegisteredPath {
 public:
  // Calls below this size stay on the plain path without an agreement. The single pass
  // wins from 16 KiB up (2.4-5.5x at 2 ranks), but every call the path considers pays the
  // agreement's bookkeeping, also on plain buffers: 0.1-0.5 us (4-12%) at 16 KiB, within
  // noise from 64 KiB (docs/BENCHMARKS.md); plain buffers are the default.
  static constexpr size_t kMinBytes = 64 << 10;
  // A buffer weft did not allocate is looked for in the caller's tmpfs files
  // (transport/shm/foreign_shared.h) only in calls whose largest buffer (LargestBytes) has
  // this size: the look is an ioctl, about 0.3 us per buffer, which a smaller call feels.
  static constexpr size_t kFileMinBytes = 256 << 10;
  static constexpr size_t kKeepPerPeer = 2;

  RegisteredPath(int rank, int size);

  // Whether the path considers `call` (a user's collective, wire kind 0): any collective
  // but the barrier, whose largest buffer (LargestBytes) has at least kMinBytes, on a
  // world of two or more whose every peer's link has flags (shm: one host). Every rank
  // answers alike.
  bool Considers(const Call& call, uint16_t kind, transport::Mesh& mesh) const;
  static size_t LargestBytes(const Call& call, int size);

  // The agreement above, run on `executor` (bounded by ctx's deadline; a dead peer is an
  // Unavailable error naming it). True: every rank's buffers are registered and peers()
  // holds the peers' buffers mapped here. Errors also when a peer's buffer cannot be
  // mapped (the communicator then fails, and its peers learn it at their next flag).
  Result<bool> Agree(const Call& call, const Registry& registry, transport::Mesh& mesh,
                     exec::Executor& executor, const exec::ExecContext& ctx);

  const exec::PeerBuffers& peers() const { return peers_; }
  // After Agree returned true: whether some rank's input and output overlap (its call is
  // in place), for CollectiveSpec::may_be_in_place.
  bool may_be_in_place() const { return may_be_in_place_; }

 private:
  const int rank_;
  const int size_;
  const int32_t pid_;  // this process's, offered to the peers (a communicator does not outlive a fork)
  sched::Schedule agreement_;  // one round: kSync with every peer
  std::vector<int> peer_ranks_;  // every rank but this one
  uint64_t agreements_ = 0;      // agreements begun: the offers' slot (Link::SetOffer)
  bool owed_ = false;            // the last agreement's flags are still to be taken
  // Maps (or finds) a peer's buffer and marks it the peer's most recently used.
  Result<void*> MapRecent(int peer, int32_t pid, const transport::SharedRegion& region);

  transport::shm::PeerBufferCache mapped_;
  std::vector<std::vector<transport::shm::PeerBufferKey>> recent_;  // per peer, newest first
  exec::PeerBuffers peers_;
  bool may_be_in_place_ = true;
  std::string last_logged_;  // the last fallback logged, so that a loop logs it once
};

}  // namespace weft::comm
