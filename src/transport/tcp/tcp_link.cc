#include "transport/tcp/tcp_link.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

namespace weft::transport::tcp {
namespace {

constexpr uint64_t kHdr = sizeof(WireHeader);
// Ops gathered into one sendmsg: enough to batch many small messages per syscall,
// bounded by IOV_MAX (1024) with room to spare.
constexpr size_t kMaxBatchOps = 32;

}  // namespace

TcpLink::TcpLink(int self, int peer, net::Fd fd, std::string peer_addr)
    : Link(self, peer), fd_(std::move(fd)), peer_addr_(std::move(peer_addr)) {}

Status TcpLink::ConnectionError(int err, bool mid_message) const {
  if (err == 0 || err == ECONNRESET || err == EPIPE || err == ENOTCONN || err == ETIMEDOUT) {
    const char* cause = err == 0           ? "peer closed"
                        : err == ETIMEDOUT ? "connection timed out"
                                           : "connection reset";
    return Unavailable(fmt::format("rank {} lost connection to rank {} (tcp {}): {}{}", self_,
                                   peer_, peer_addr_, cause,
                                   mid_message ? " in the middle of a message" : ""));
  }
  return ErrnoStatus(
      fmt::format("rank {}: connection to rank {} (tcp {})", self_, peer_, peer_addr_), err);
}

Result<bool> TcpLink::Progress() {
  if (!failed_.ok()) return failed_;
  Result<bool> s = ProgressSends();
  if (!s.ok()) {
    failed_ = s.status();
    return failed_;
  }
  Result<bool> r = ProgressRecvs();
  if (!r.ok()) {
    failed_ = r.status();
    return failed_;
  }
  return s.value() || r.value();
}

Result<bool> TcpLink::ProgressSends() {
  bool moved = false;
  while (!sends_.empty()) {
    // Gather the unsent remainder of up to kMaxBatchOps queued messages.
    iovec iov[2 * kMaxBatchOps];
    int n_iov = 0;
    uint64_t off = send_off_;  // applies to the first op only
    for (size_t i = 0; i < sends_.size() && i < kMaxBatchOps; ++i) {
      SendOp* op = sends_[i];
      if (off < kHdr) {
        iov[n_iov++] = {reinterpret_cast<uint8_t*>(&op->header) + off, kHdr - off};
        off = kHdr;
      }
      uint64_t done = off - kHdr;
      if (done < op->header.bytes) {
        iov[n_iov++] = {const_cast<uint8_t*>(static_cast<const uint8_t*>(op->data)) + done,
                        op->header.bytes - done};
      }
      off = 0;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n_iov;
    // MSG_NOSIGNAL: a closed peer must become a Status, not a SIGPIPE.
    ssize_t w = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return ConnectionError(errno, send_off_ > 0);
    }
    moved = moved || w > 0;
    // Retire the ops the written bytes cover.
    uint64_t left = static_cast<uint64_t>(w);
    while (!sends_.empty()) {
      SendOp* op = sends_.front();
      uint64_t remaining = kHdr + op->header.bytes - send_off_;
      if (left < remaining) {
        send_off_ += left;
        break;
      }
      left -= remaining;
      op->done = true;
      sends_.pop_front();
      send_off_ = 0;
    }
  }
  return moved;
}

Result<bool> TcpLink::ProgressRecvs() {
  bool moved = false;
  while (!recvs_.empty()) {
    RecvOp* op = recvs_.front();
    if (in_header_off_ < kHdr) {
      // Read the header alone: its payload must not land anywhere before it is checked.
      ssize_t r = ::recv(fd_.get(), reinterpret_cast<uint8_t*>(&in_header_) + in_header_off_,
                         kHdr - in_header_off_, MSG_DONTWAIT);
      if (r == 0) return ConnectionError(0, in_header_off_ > 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return ConnectionError(errno, in_header_off_ > 0);
      }
      in_header_off_ += static_cast<uint64_t>(r);
      moved = true;
      if (in_header_off_ < kHdr) continue;
      WEFT_RETURN_IF_ERROR(CheckHeader(in_header_, op->expect, self_, peer_, "tcp " + peer_addr_));
    }
    if (recv_off_ < op->expect.bytes) {
      ssize_t r = ::recv(fd_.get(), static_cast<uint8_t*>(op->data) + recv_off_,
                         op->expect.bytes - recv_off_, MSG_DONTWAIT);
      if (r == 0) return ConnectionError(0, true);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return ConnectionError(errno, true);
      }
      recv_off_ += static_cast<uint64_t>(r);
      moved = true;
      if (recv_off_ < op->expect.bytes) continue;
    }
    op->done = true;
    recvs_.pop_front();
    in_header_off_ = 0;
    recv_off_ = 0;
    moved = true;
  }
  return moved;
}

void TcpLink::Shutdown() {
  // The peer reads end-of-stream; our later reads fail fast too.
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace weft::transport::tcp
