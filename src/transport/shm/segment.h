// The POSIX shared-memory segment shared by one pair of ranks on the same host. It holds
// two byte rings (one per direction) and, per side, the owner's pid and flags used to
// notice a peer that closed or died.
//
// Life cycle: the lower rank Create()s the segment (O_EXCL), the higher rank Open()s it
// and marks itself attached, and the creator, in WaitPeerAttached(), shm_unlink()s the
// name as soon as both are attached, so that nothing is left in /dev/shm even if both
// processes are later killed. Only a crash between Create and that unlink can leave a
// segment behind; Create detects such a stale one (its creator is dead) and replaces it.
//
// Thread-safety: a segment is used by one thread of each process at a time.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "transport/link.h"
#include "transport/shm/ring.h"

namespace weft::transport::shm {

// One side's identity and state, on its own cache line. Each field is written by its
// side only, but `bell`, which the peer bumps; the pairings are stated beside each.
struct SideInfo {
  // pid, pid_ns, probe_addr: written before `attached` (opener) or the header's magic
  // (creator), both stored with release and loaded with acquire by the peer.
  alignas(64) std::atomic<int32_t> pid{0};
  uint64_t pid_ns = 0;                // inode of /proc/self/ns/pid (0: unknown)
  // 0 free; claimed (segment.cc) while the opener fills pid, pid_ns and probe_addr; 1 once
  // the side has mapped the segment and those are published.
  std::atomic<uint32_t> attached{0};
  // Release (Segment::~Segment, MarkClosed) / acquire (ShmLink::PeerClosedError,
  // CheckPeer): publishes abort_text and every ring byte the side wrote before.
  std::atomic<uint32_t> closed{0};  // set when the side's link is destroyed
  // Single-copy transfers (see cma.h): where the peer can find a probe word in this
  // process, whether this side could read the peer's probe, and how many of the peer's
  // single-copy messages this side has finished reading (the sender's completion).
  uint64_t probe_addr = 0;
  std::atomic<uint32_t> cma_state{0};  // CmaState: release/acquire in ConnectShmPeers
  // Release (ShmLink::ProgressRecvs, after the read) / acquire (ProgressSends): the
  // sender reuses its buffer only after the receiver's reads of it.
  alignas(64) std::atomic<uint64_t> cma_done{0};
  // Sleeping (Link::ArmWake): this side sets `sleeping` before it may sleep on `bell`;
  // the peer, after making progress, bumps `bell` and wakes it while `sleeping` is set.
  // A store->load pattern on both sides (Dekker): ordered by the seq_cst fences in
  // ShmLink::ArmWake and ShmLink::RingPeer, not by the atomics' own orders.
  alignas(64) std::atomic<uint32_t> bell{0};
  std::atomic<uint32_t> sleeping{0};
  // Why this side failed (Link::SendAbort): written before `closed`, read after it.
  uint32_t abort_bytes = 0;  // of abort_text; 0: no cause given
  char abort_text[1024] = {};
  // Calls on registered buffers (Link::RaiseFlag): how many flags this side has raised,
  // and the buffers it offers for the calls being agreed, written before the flag; two
  // slots, by the agreement's parity (Link::SetOffer says why).
  // Release (ShmLink::RaiseFlag) / acquire (TakeFlag, PeerHasFlag): publishes `offers`
  // and this side's writes into the registered buffers.
  alignas(64) std::atomic<uint64_t> flags{0};
  BufferOffer offers[2];
};

enum CmaState : uint32_t { kCmaUnknown = 0, kCmaWorks = 1, kCmaDenied = 2 };

inline constexpr uint64_t kSegmentMagic = 0x314d485354464557ull;  // "WEFTSHM1"
// 4: rings may rewind (a marker where the next header would be), which a version-3
//    peer would not read.
// 5: SideInfo has the wake word (bell, sleeping).
// 6: messages travel in stamped slots (Ring::WriteWhole/WriteStreamedHeader).
// 7: SideInfo has the flags and the buffer offer (registered buffers).
// 8: the producer clears the stamp word where the next slot goes before it publishes a
//    message's end (Ring::ClearNextStamp); a version-7 producer leaves stale payload
//    there, which a consumer may read as a stamp.
// 9: two buffer offers, by the agreement's parity (a rank on plain buffers no longer
//    waits for its peers' flags).
inline constexpr uint32_t kSegmentVersion = 9;

// At offset 0 of the segment; ring data follows at SegmentLayout::data_offset.
struct SegmentHeader {
  std::atomic<uint64_t> magic{0};  // stored last (release) by the creator
  uint32_t version = 0;
  int32_t ranks[2] = {0, 0};  // [0]: the lower (creating) rank, [1]: the higher
  uint64_t comm_id = 0;
  uint64_t ring_bytes = 0;
  uint64_t cma_threshold = 0;  // creator's WEFT_SHM_CMA_THRESHOLD, used by both sides
  SideInfo side[2];
  RingControl ring[2];  // ring[s] carries bytes written by side s
};

// Default bytes per ring (per direction); WEFT_SHM_RING_BYTES overrides.
inline constexpr uint64_t kDefaultRingBytes = 4ull << 20;

// WEFT_SHM_RING_BYTES: a power of two in [4 KiB, 1 GiB]; InvalidArgument otherwise.
Result<uint64_t> RingBytesFromEnv();

// Default for WEFT_SHM_REWIND_BYTES: how far into its ring a drained link starts over
// (Ring::RewindIfDrained). Measured on 2-rank allreduce, docs/BENCHMARKS.md.
inline constexpr uint64_t kDefaultRewindBytes = 64ull << 10;

// WEFT_SHM_REWIND_BYTES: bytes (>= 0); 0 turns rewinding off. Read by each sender for
// itself: the receiver follows the marker whatever the sender chose.
Result<uint64_t> RewindBytesFromEnv();

// WEFT_SHM_WAKE: 1 (default): a waiting rank sleeps on its wake word and its peer wakes
// it (ShmLink::ArmWake); 0: it sleeps 200 µs at a time instead (the behaviour before
// the wake word; for A/B runs, or where futexes on shared memory are not allowed).
Result<bool> WakeFromEnv();

class Segment {
 public:
  // "/weft-u<uid>-<comm_id hex>-<lo>-<hi>"
  static std::string Name(uint64_t comm_id, int lo, int hi);

  // Creates the segment for ranks self < peer with two rings of ring_bytes each. Never
  // waits for the peer. Errors: a live segment of the same name already exists (another
  // communicator with this comm_id), /dev/shm is full.
  static Result<std::unique_ptr<Segment>> Create(uint64_t comm_id, int self, int peer,
                                                 uint64_t ring_bytes,
                                                 uint64_t cma_threshold = 0);
  // Opens the segment created by peer < self, retrying until it exists and is
  // initialised, or until `deadline`.
  static Result<std::unique_ptr<Segment>> Open(uint64_t comm_id, int self, int peer,
                                               const Deadline& deadline);
  // Creator only: waits (bounded) until the peer has attached, then unlinks the name.
  Status WaitPeerAttached(const Deadline& deadline);

  // Marks this side closed (the peer's link then fails with "peer closed"), unmaps, and
  // unlinks the name if that has not happened yet.
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  int side() const { return side_; }  // 0: creator (lower rank), 1: opener
  // Tells the peer this side will send and read nothing more ("peer closed"). Release:
  // pairs with the acquire in ShmLink::PeerClosedError/CheckPeer.
  void MarkClosed() { header_->side[side_].closed.store(1, std::memory_order_release); }
  SegmentHeader* header() const { return header_; }
  // The ring this side writes into / reads from.
  Ring SendRing() const { return MakeRing(side_); }
  Ring RecvRing() const { return MakeRing(1 - side_); }
  const SideInfo& peer_info() const { return header_->side[1 - side_]; }
  // The peer's wake word is the one field of its side this side writes (ShmLink::RingPeer).
  SideInfo& peer_info_for_wake() const { return header_->side[1 - side_]; }
  SideInfo& my_info() const { return header_->side[side_]; }
  const std::string& name() const { return name_; }

 private:
  Segment(std::string name, int side, void* base, size_t bytes);
  Ring MakeRing(int writer) const;

  std::string name_;
  int side_;
  void* base_;
  size_t bytes_;
  SegmentHeader* header_;
  bool unlinked_ = false;
};

// This process's pid namespace inode (0 if unknown): pids are only comparable, and a
// peer's liveness only checkable, when both sides share it.
uint64_t PidNamespace();
// True if `pid` is known to be gone: kill(pid, 0) fails with ESRCH, or it is a zombie.
bool ProcessIsDead(pid_t pid);

}  // namespace weft::transport::shm
