#include "transport/shm/shm_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/futex.h"
#include "transport/shm/cma.h"

namespace weft::transport::shm {

ShmLink::ShmLink(int self, int peer, std::unique_ptr<Segment> segment, uint64_t cma_threshold,
                 uint64_t rewind_bytes, bool wake)
    : Link(self, peer),
      segment_(std::move(segment)),
      out_(segment_->SendRing()),
      in_(segment_->RecvRing()),
      cma_threshold_(cma_threshold),
      rewind_window_(rewind_bytes == 0 ? UINT64_MAX : rewind_bytes),
      wake_(wake) {}

Result<bool> ShmLink::Progress() {
  if (!failed_.ok()) return failed_;
  if (!Busy()) return false;
  bool moved = ProgressSends();
  Result<bool> r = ProgressRecvs();
  if (!r.ok()) {
    failed_ = r.status();
    return failed_;
  }
  moved = moved || r.value();
  if (moved) RingPeer();
  if (moved || !Busy()) {
    idle_ = false;
    return moved;
  }
  Status s = CheckPeer();
  if (!s.ok()) {
    failed_ = s;
    return failed_;
  }
  return false;
}

bool ShmLink::ProgressSends() {
  bool moved = false;
  // Single-copy sends complete when the peer has read them, in order. Acquire: pairs
  // with the peer's release in ProgressRecvs; its reads of our buffers are done.
  uint64_t acked = segment_->peer_info().cma_done.load(std::memory_order_acquire);
  while (!cma_unacked_.empty() && cma_unacked_.front().second <= acked) {
    cma_unacked_.front().first->done = true;
    cma_unacked_.pop_front();
    moved = true;
  }
  constexpr uint64_t kHdr = sizeof(WireHeader);
  while (!sends_.empty()) {
    SendOp* op = sends_.front();
    const uint64_t bytes = op->header.bytes;
    if (!header_sent_) {
      out_.RewindIfDrained(rewind_window_);
      if (SingleCopy(bytes)) {
        // The header and the buffer's address in one slot; the op completes on the
        // peer's ack (cma_done).
        const uint64_t addr = reinterpret_cast<uint64_t>(op->data);
        if (!out_.WriteWhole(&op->header, kHdr, &addr, sizeof(addr))) break;
        cma_unacked_.emplace_back(op, ++cma_sent_);
        sends_.pop_front();
        moved = true;
        continue;
      }
      // A small message goes in whole, header and payload published by one stamp.
      if (bytes <= kWholeMessageBytes && out_.WriteWhole(&op->header, kHdr, op->data, bytes)) {
        op->done = true;
        sends_.pop_front();
        moved = true;
        continue;
      }
      if (!out_.WriteStreamedHeader(&op->header, kHdr, bytes)) break;
      header_sent_ = true;
      payload_sent_ = 0;
      moved = true;
    }
    if (payload_sent_ < bytes) {
      size_t n =
          out_.Write(static_cast<const uint8_t*>(op->data) + payload_sent_, bytes - payload_sent_);
      payload_sent_ += n;
      moved = moved || n > 0;
      if (payload_sent_ < bytes) break;
    }
    op->done = true;
    sends_.pop_front();
    header_sent_ = false;
    moved = true;
  }
  return moved;
}

Status ShmLink::CmaReadFailed(const Status& st, uint64_t bytes) const {
  // A peer that failed may have freed the buffer it advertised as soon as its call
  // returned; it closed its end before that, so its cause, not a bad address or a
  // vanished process, is the error to report.
  Status closed = PeerClosedError();
  if (!closed.ok()) return closed;
  return st.WithContext(fmt::format("rank {} reading {} bytes from rank {} (shm single-copy)",
                                    self_, bytes, peer_));
}

Result<bool> ShmLink::ProgressRecvs() {
  bool moved = false;
  constexpr uint64_t kHdr = sizeof(WireHeader);
  constexpr uint64_t kAddr = sizeof(uint64_t);
  while (!inbound_.recvs.empty()) {
    RecvOp* op = inbound_.recvs.front();
    const uint64_t bytes = op->expect.bytes;
    if (inbound_.header_off == 0) {
      const Ring::SlotKind kind = in_.PeekSlot();
      if (kind == Ring::SlotKind::kNone) break;
      moved = true;
      if (kind == Ring::SlotKind::kRewind) {
        in_.ConsumeSlot(kind, 0);
        continue;
      }
      in_.CopyFromSlot(&inbound_.header, kHdr);
      // Validate before a single payload byte lands in the user's buffer.
      WEFT_RETURN_IF_ERROR(CheckHeader(inbound_.header, op->expect, self_, peer_, "shm"));
      const bool whole = kind == Ring::SlotKind::kWhole;
      if (SingleCopy(bytes)) {
        if (!whole) return ProtocolError(kind, bytes);
        in_.CopyFromSlot(&cma_addr_in_, kAddr, kHdr);
        in_.ConsumeSlot(kind, kHdr + kAddr);
        inbound_.header_off = kHdr;
      } else if (whole) {
        // A small message written whole is read whole. (Never one consumed in place: the
        // poster asked CanConsumeInPlace, which says no at this size.)
        if (bytes > kWholeMessageBytes || op->consume != nullptr)
          return ProtocolError(kind, bytes);
        in_.CopyFromSlot(op->data, bytes, kHdr);
        in_.ConsumeSlot(kind, kHdr + bytes);
        op->landed = bytes;
        inbound_.CompleteFront();
        continue;
      } else {
        in_.ConsumeSlot(kind, kHdr);
        inbound_.header_off = kHdr;
      }
    }
    if (SingleCopy(bytes)) {
      // op->landed counts the payload copied so far: all of it in one go, or one piece
      // per pass for a receive consumed as it lands.
      const uint64_t left = bytes - op->landed;
      const uint64_t piece = op->incremental ? std::min(left, kIncrementalPieceBytes) : left;
      Status st = CmaRead(segment_->peer_info().pid.load(), cma_addr_in_ + op->landed,
                          static_cast<uint8_t*>(op->data) + op->landed, piece);
      if (!st.ok()) return CmaReadFailed(st, bytes);
      op->landed += piece;
      moved = true;
      if (op->landed < bytes) break;  // the consumer takes this piece first
      // Release: pairs with the acquire in the peer's ProgressSends (it may reuse the
      // buffer once this read of it is done).
      segment_->my_info().cma_done.fetch_add(1, std::memory_order_release);
      inbound_.CompleteFront();
      continue;
    }
    if (inbound_.payload_off < bytes) {
      size_t n;
      if (op->consume != nullptr) {
        uint64_t at = inbound_.payload_off;
        n = in_.ReadInPlace(std::min(bytes - at, kIncrementalPieceBytes), op->consume_align,
                            [&](const uint8_t* piece, size_t k) {
                              op->consume(op->consume_ctx, at, piece, k);
                              at += k;
                            });
      } else {
        n = in_.Read(static_cast<uint8_t*>(op->data) + inbound_.payload_off,
                     bytes - inbound_.payload_off);
      }
      inbound_.payload_off += n;
      op->landed = inbound_.payload_off;
      moved = moved || n > 0;
      if (inbound_.payload_off < bytes) break;
    }
    inbound_.CompleteFront();
    moved = true;
  }
  return moved;
}

// The sender chose the slot's kind from the same size and threshold the receiver sees
// (the segment's single-copy threshold is shared), so a mismatch means a corrupted ring
// or a peer built differently.
Status ShmLink::ProtocolError(Ring::SlotKind kind, uint64_t bytes) const {
  return Internal(fmt::format(
      "rank {}: shm link from rank {}: a {}-byte message came as a {} slot, which this "
      "side cannot read (segment version {} on both sides?)",
      self_, peer_, bytes, kind == Ring::SlotKind::kWhole ? "whole" : "streamed", kSegmentVersion));
}

void ShmLink::SendAbort(const Status& cause) {
  std::string text = AbortText(cause);
  SideInfo& me = segment_->my_info();
  size_t n = std::min(text.size(), sizeof(me.abort_text));
  std::memcpy(me.abort_text, text.data(), n);
  me.abort_bytes = static_cast<uint32_t>(n);  // published by the release store of `closed`
}

void ShmLink::RingPeer() {
  // Orders this side's ring and counter stores before the load of the peer's flag, as
  // ArmWake orders the flag's store before the peer's next look at the rings: either
  // the peer sees the progress in its last pass before sleeping, or this side sees the
  // flag and wakes it. (On x86 the fence is one locked instruction, ~20 cycles; on
  // aarch64 a dmb ish: release stores alone may still pass the load below.)
  std::atomic_thread_fence(std::memory_order_seq_cst);
  SideInfo& peer = segment_->peer_info_for_wake();
  // Relaxed: ordered by the fence above (pairs with the fence in the peer's ArmWake).
  if (peer.sleeping.load(std::memory_order_relaxed) == 0) return;
  // Release: pairs with the acquire of the bell in exec::Backoff::ArmWakes and
  // Executor::SleepOnFlags (a sleeper that reads the new value sees our progress); a
  // sleeper that read the old one is refused or woken by the futex itself.
  peer.bell.fetch_add(1, std::memory_order_release);
  FutexWakeAll(&peer.bell);
}

std::atomic<uint32_t>* ShmLink::ArmWake() {
  if (!wake_) return nullptr;
  SideInfo& me = segment_->my_info();
  // Relaxed store, then a seq_cst fence: pairs with the fence in the peer's RingPeer, so
  // either the caller's next look at the rings and flags (after it reads the bell) sees
  // the peer's progress, or the peer sees `sleeping` and rings.
  me.sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return &me.bell;
}

void ShmLink::DisarmWake() {
  // Relaxed: a hint; a peer that still reads 1 only rings once for nothing.
  segment_->my_info().sleeping.store(0, std::memory_order_relaxed);
  // A sleep may have lasted milliseconds: let the next idle pass read the clock, so the
  // peer's liveness is checked on time (CheckPeer reads it every kClockEveryIdlePasses).
  if (idle_) idle_passes_ = kClockEveryIdlePasses - 1;
}

void ShmLink::RaiseFlag() {
  // Release: the offer and every write into the peer's or this side's buffers before the
  // flag are visible to the peer once it sees the flag (pairs with the acquire in its
  // TakeFlag/PeerHasFlag). RingPeer's fence then orders the flag before the look at the
  // peer's sleeping word.
  segment_->my_info().flags.store(++flags_raised_, std::memory_order_release);
  RingPeer();
}

Result<bool> ShmLink::TakeFlag() {
  if (!failed_.ok()) return failed_;
  // Acquire: pairs with the release in the peer's RaiseFlag (its offer, its writes).
  if (segment_->peer_info().flags.load(std::memory_order_acquire) > flags_taken_) {
    ++flags_taken_;
    idle_ = false;
    return true;
  }
  // No flag: a peer that closed its end raises none later (its last flag is stored
  // before `closed`, and was looked at above); a dead one neither (CheckPeer).
  Status s = PeerClosedError();
  if (s.ok()) s = CheckPeer();
  if (!s.ok()) {
    failed_ = s;
    return failed_;
  }
  return false;
}

Status ShmLink::PeerClosedError() const {
  const SideInfo& peer = segment_->peer_info();
  // Acquire: pairs with the release of `closed` in the peer's Segment (abort_text).
  if (peer.closed.load(std::memory_order_acquire) == 0) return Status::Ok();
  uint32_t n = std::min<uint32_t>(peer.abort_bytes, sizeof(peer.abort_text));
  if (n > 0) return PeerFailed(self_, peer_, "shm", std::string_view(peer.abort_text, n));
  return Unavailable(
      fmt::format("rank {} lost connection to rank {} (shm): peer closed", self_, peer_));
}

Result<Link::Peeked> ShmLink::PeekHeader() {
  if (!failed_.ok()) return failed_;
  if (!inbound_.recvs.empty() || inbound_.header_off != 0) return Peeked{};
  while (true) {
    const Ring::SlotKind kind = in_.PeekSlot();
    if (kind == Ring::SlotKind::kRewind) {
      in_.ConsumeSlot(kind, 0);
      continue;
    }
    if (kind == Ring::SlotKind::kNone) {
      // Closed is stored after the peer's last write (see CheckPeer): nothing more comes.
      // With a cause the peer failed; without one it is done.
      const SideInfo& peer = segment_->peer_info();
      if (peer.closed.load(std::memory_order_acquire) == 0) return Peeked{};
      if (peer.abort_bytes == 0) return Peeked{std::nullopt, true};
      failed_ = PeerClosedError();
      return failed_;
    }
    WireHeader h;
    in_.CopyFromSlot(&h, sizeof(h));
    return Peeked{h, false};
  }
}

Status ShmLink::CheckPeer() {
  const SideInfo& peer = segment_->peer_info();
  // Closed is stored after the peer's last write (release), so once it is seen, the
  // rings hold everything the peer will ever send. A pending recv with nothing more to
  // read, or a pending send nobody will read, can then never complete.
  if (peer.closed.load(std::memory_order_acquire) != 0) {
    bool recv_stuck = !inbound_.recvs.empty() && in_.Readable() == 0;
    if (recv_stuck || !sends_.empty() || !cma_unacked_.empty()) return PeerClosedError();
  }
  // Reading the clock costs as much as a small message, and most waits end within a few
  // passes: look at it only every kClockEveryIdlePasses fruitless passes, the first
  // time to start the interval (not when the wait begins, where it would delay the
  // message that usually lands a moment later).
  if (!idle_) {
    idle_ = true;
    idle_passes_ = 0;
    idle_since_ = {};
    return Status::Ok();
  }
  if (++idle_passes_ % kClockEveryIdlePasses != 0) return Status::Ok();
  auto now = std::chrono::steady_clock::now();
  if (idle_since_ == std::chrono::steady_clock::time_point{}) {
    idle_since_ = now;
    return Status::Ok();
  }
  if (now - idle_since_ < kLivenessInterval) return Status::Ok();
  idle_since_ = now;  // re-arm: the next check is another interval away
  // Pids are only meaningful within one pid namespace; across namespaces only the
  // executor's deadline can catch a dead peer.
  if (peer.pid_ns != 0 && peer.pid_ns == PidNamespace()) {
    int pid = peer.pid.load(std::memory_order_relaxed);  // set before `attached` (acquired)
    if (ProcessIsDead(pid)) {
      // A peer that failed first stores its cause and `closed`, then exits. If it closed
      // after this pass's first look, or closed while this side waits on another link,
      // its cause is the better report: it names the rank that failed first, which a
      // bare "rank P died" would hide from everyone downstream of P.
      Status told = PeerClosedError();
      if (!told.ok() && peer.abort_bytes > 0) return told;
      return Unavailable(
          fmt::format("rank {} lost connection to rank {} (shm): rank {} (pid {}) died", self_,
                      peer_, peer_, pid));
    }
  }
  return Status::Ok();
}

}  // namespace weft::transport::shm
