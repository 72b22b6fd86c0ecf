// Collectives on registered buffers (weftMemAlloc + weftCommRegister, docs/TRANSPORTS.md
// "Registered buffers"): when every rank's input and output of a call are registered, the
// ranks of one host run a schedule that reads and writes the peers' buffers in place
// (sched kPeer* steps: the single_pass algorithms) instead of passing the bytes
// through the shm rings.
//
// All ranks must take the same path, so the choice is collective. For a call the path
// considers (Considers: the same answer on every rank, from the call's arguments and the
// links), each rank offers its buffers (Link::SetOffer: memfd, registration, offset, or
// "not registered") and runs a one-round schedule of kSync steps with every peer, after
// which it reads every peer's offer. Only the buffers a rank's schedule uses are
// offered (a non-root's broadcast input may be NULL). Every rank then sees the same
// offers and decides alike: all registered, the peers' buffers are mapped (PeerBufferCache, once per
// registration) and the registered schedule runs; otherwise the call falls back to the
// plain path on every rank, and a rank that had registered its buffers says so at INFO.
// A rank learns nothing when a peer deregisters or frees a buffer, so it keeps only the
// kKeepPerPeer buffers of each peer it used last mapped (the last call's input and
// output): an older one is unmapped, and its memory, if freed by its owner, goes back to
// the system then. A loop alternating between buffer sets maps them again on each call.
// The offers stay valid until read: a peer cannot start its next agreement before this
// rank has taken part in the call that follows this one (an allreduce needs every rank).
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
  // wins from 16 KiB up, but every call the path considers pays the agreement's flag
  // round trip, also on plain buffers, where it cost 0.5-2 us (10-55%) at 16-64 KiB and nothing
  // measurable from 256 KiB (docs/BENCHMARKS.md); plain buffers are the default.
  static constexpr size_t kMinBytes = 256 << 10;
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
  sched::Schedule agreement_;  // one round: kSync with every peer
  // Maps (or finds) a peer's buffer and marks it the peer's most recently used.
  Result<void*> MapRecent(int peer, int32_t pid, const transport::SharedRegion& region);

  transport::shm::PeerBufferCache mapped_;
  std::vector<std::vector<transport::shm::PeerBufferKey>> recent_;  // per peer, newest first
  exec::PeerBuffers peers_;
  bool may_be_in_place_ = true;
  std::string last_logged_;  // the last fallback logged, so that a loop logs it once
};

}  // namespace weft::comm
