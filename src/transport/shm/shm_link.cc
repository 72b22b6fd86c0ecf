#include "transport/shm/shm_link.h"

#include <fmt/format.h>

namespace weft::transport::shm {

ShmLink::ShmLink(int self, int peer, std::unique_ptr<Segment> segment)
    : Link(self, peer),
      segment_(std::move(segment)),
      out_(segment_->SendRing()),
      in_(segment_->RecvRing()) {}

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
  while (!sends_.empty()) {
    SendOp* op = sends_.front();
    constexpr uint64_t kHdr = sizeof(WireHeader);
    if (send_off_ < kHdr) {
      size_t n =
          out_.Write(reinterpret_cast<const uint8_t*>(&op->header) + send_off_, kHdr - send_off_);
      send_off_ += n;
      moved = moved || n > 0;
      if (send_off_ < kHdr) break;
    }
    uint64_t done = send_off_ - kHdr;
    if (done < op->header.bytes) {
      size_t n = out_.Write(static_cast<const uint8_t*>(op->data) + done, op->header.bytes - done);
      send_off_ += n;
      moved = moved || n > 0;
      if (send_off_ - kHdr < op->header.bytes) break;
    }
    op->done = true;
    sends_.pop_front();
    send_off_ = 0;
    moved = true;
  }
  return moved;
}

Result<bool> ShmLink::ProgressRecvs() {
  bool moved = false;
  while (!recvs_.empty()) {
    RecvOp* op = recvs_.front();
    constexpr uint64_t kHdr = sizeof(WireHeader);
    if (in_header_off_ < kHdr) {
      size_t n =
          in_.Read(reinterpret_cast<uint8_t*>(&in_header_) + in_header_off_, kHdr - in_header_off_);
      in_header_off_ += n;
      moved = moved || n > 0;
      if (in_header_off_ < kHdr) break;
      // Validate before a single payload byte lands in the user's buffer.
      WEFT_RETURN_IF_ERROR(CheckHeader(in_header_, op->expect, self_, peer_, "shm"));
    }
    if (recv_off_ < op->expect.bytes) {
      size_t n =
          in_.Read(static_cast<uint8_t*>(op->data) + recv_off_, op->expect.bytes - recv_off_);
      recv_off_ += n;
      moved = moved || n > 0;
      if (recv_off_ < op->expect.bytes) break;
    }
    op->done = true;
    recvs_.pop_front();
    in_header_off_ = 0;
    recv_off_ = 0;
    moved = true;
  }
  return moved;
}

Status ShmLink::CheckPeer() {
  const SideInfo& peer = segment_->peer_info();
  // Closed is stored after the peer's last write (release), so once it is seen, the
  // rings hold everything the peer will ever send. A pending recv with nothing more to
  // read, or a pending send nobody will read, can then never complete.
  if (peer.closed.load(std::memory_order_acquire) != 0) {
    bool recv_stuck = !recvs_.empty() && in_.Readable() == 0;
    if (recv_stuck || !sends_.empty()) {
      return Unavailable(
          fmt::format("rank {} lost connection to rank {} (shm): peer closed", self_, peer_));
    }
  }
  auto now = std::chrono::steady_clock::now();
  if (!idle_) {
    idle_ = true;
    idle_since_ = now;
    return Status::Ok();
  }
  if (now - idle_since_ < kLivenessInterval) return Status::Ok();
  idle_since_ = now;  // re-arm: the next check is another interval away
  // Pids are only meaningful within one pid namespace; across namespaces only the
  // executor's deadline can catch a dead peer.
  if (peer.pid_ns != 0 && peer.pid_ns == PidNamespace()) {
    int pid = peer.pid.load(std::memory_order_relaxed);
    if (ProcessIsDead(pid)) {
      return Unavailable(
          fmt::format("rank {} lost connection to rank {} (shm): rank {} (pid {}) died", self_,
                      peer_, peer_, pid));
    }
  }
  return Status::Ok();
}

}  // namespace weft::transport::shm
