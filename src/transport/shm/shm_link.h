// A Link to a peer on the same host through a shared-memory segment (see segment.h):
// each message is a stamped slot of the ring of that direction (ring.h) holding its
// 32-byte WireHeader. A message of up to kWholeMessageBytes that fits goes whole, header
// and payload in the slot; a larger one streams its payload after the slot in pieces as
// space frees up, so messages of any size pass through rings of a fixed size.
//
// Messages of at least `cma_threshold` bytes (when the pair can use cross-memory attach)
// carry only the sender's buffer address after the header, in a whole slot; the receiver
// copies the payload straight out of the sender's memory and counts it in cma_done,
// which is what completes the send.
//
// A sender whose ring the peer has drained starts the next message at the ring's start
// once it is `rewind_bytes` in (Ring::RewindIfDrained, a kRewind slot); small messages so
// stay on a few hot cache lines and pages.
//
// Progress copies as much as both rings allow and never blocks. There is no file
// descriptor to poll (PollFd() == -1): the executor must call Progress() to notice new
// bytes, or sleep on the wake word (ArmWake), which the peer rings after progress. A peer that
// destroyed its link is reported at once; a peer process that died is noticed after ~100 ms without
// progress (kill(pid, 0) == ESRCH, or a zombie).
//
// Thread-safety: one thread at a time per link.
#pragma once

#include <chrono>
#include <deque>
#include <memory>

#include "transport/inbound.h"
#include "transport/link.h"
#include "transport/shm/segment.h"

namespace weft::transport::shm {

class ShmLink final : public Link {
 public:
  // cma_threshold: messages of at least this many bytes are sent single-copy (cma.h);
  // 0: everything goes through the ring. rewind_bytes: see above; 0: never rewind.
  // wake: offer the wake word (ArmWake); false: none, the executor sleeps by the clock.
  ShmLink(int self, int peer, std::unique_ptr<Segment> segment, uint64_t cma_threshold = 0,
          uint64_t rewind_bytes = kDefaultRewindBytes, bool wake = true);
  ~ShmLink() override = default;

  void PostSend(SendOp* op) override { sends_.push_back(op); }
  void PostRecv(RecvOp* op) override { inbound_.recvs.push_back(op); }
  Result<bool> Progress() override;
  bool Busy() const override {
    return !sends_.empty() || !inbound_.recvs.empty() || !cma_unacked_.empty();
  }
  bool single_copy() const { return cma_threshold_ > 0; }
  // A streamed payload passes through the ring, which can hand it over where it lies.
  bool CanConsumeInPlace(uint64_t bytes) const override {
    return bytes > kWholeMessageBytes && !SingleCopy(bytes);
  }
  const char* Name() const override { return "shm"; }
  bool CanPeek() const override { return true; }
  Result<Peeked> PeekHeader() override;
  void Shutdown() override {
    segment_->MarkClosed();
    RingPeer();
  }
  void SendAbort(const Status& cause) override;
  std::atomic<uint32_t>* ArmWake() override;
  void DisarmWake() override;
  bool HasFlags() const override { return true; }
  void RaiseFlag() override;
  Result<bool> TakeFlag() override;
  bool PeerHasFlag() const override {
    // Acquire: pairs with the release in the peer's RaiseFlag.
    return segment_->peer_info().flags.load(std::memory_order_acquire) > flags_taken_;
  }
  void SetOffer(uint64_t agreement, const BufferOffer& offer) override {
    segment_->my_info().offers[agreement % 2] = offer;
  }
  BufferOffer PeerOffer(uint64_t agreement) const override {
    return segment_->peer_info().offers[agreement % 2];
  }

  // How long without progress before checking whether the peer process is alive.
  static constexpr std::chrono::milliseconds kLivenessInterval{100};
  static constexpr uint32_t kClockEveryIdlePasses = 256;
  // Messages up to this size are written header and payload together in one slot
  // (Ring::WriteWhole).
  static constexpr uint64_t kWholeMessageBytes = 4096;

 private:
  bool ProgressSends();
  Result<bool> ProgressRecvs();
  bool SingleCopy(uint64_t bytes) const { return cma_threshold_ > 0 && bytes >= cma_threshold_; }
  // The peer's failure (its abort text) once it has closed its end; Ok while it has not.
  Status PeerClosedError() const;
  // A failed single-copy read of `bytes`: the peer's own cause when it has closed.
  Status CmaReadFailed(const Status& st, uint64_t bytes) const;
  Status ProtocolError(Ring::SlotKind kind, uint64_t bytes) const;
  // Called when nothing moved: fails if the peer closed its end or its process died.
  Status CheckPeer();
  // After this side made progress the peer may be waiting for: wakes the peer if it
  // announced it sleeps (Link::ArmWake).
  void RingPeer();

  std::unique_ptr<Segment> segment_;
  Ring out_;
  Ring in_;

  uint64_t cma_threshold_;
  uint64_t rewind_window_;  // Ring::RewindIfDrained's window; UINT64_MAX: never
  bool wake_;

  std::deque<SendOp*> sends_;
  bool header_sent_ = false;   // the front send's header is in a kStreamed slot
  uint64_t payload_sent_ = 0;  // bytes of its payload written after it
  // Single-copy sends whose address is in the ring, waiting for the peer to read them:
  // (op, its number among this side's single-copy sends).
  std::deque<std::pair<SendOp*, uint64_t>> cma_unacked_;
  uint64_t cma_sent_ = 0;

  Inbound inbound_;
  uint64_t cma_addr_in_ = 0;  // the peer's buffer address for a single-copy recv

  Status failed_;
  uint64_t flags_raised_ = 0;  // by this side (SideInfo::flags)
  uint64_t flags_taken_ = 0;   // of the peer's
  bool idle_ = false;  // true while Progress calls move nothing
  uint32_t idle_passes_ = 0;
  // When the idle passes' first clock read saw them (the epoch before it): CheckPeer.
  std::chrono::steady_clock::time_point idle_since_;
};

}  // namespace weft::transport::shm
