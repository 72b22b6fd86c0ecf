#include "transport/tcp/tcp_link.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weft::transport::tcp {
namespace {

constexpr uint64_t kHdr = sizeof(WireHeader);
// Ops gathered into one sendmsg: enough to batch many small messages per syscall,
// bounded by IOV_MAX (1024) with room to spare.
constexpr size_t kMaxBatchOps = 32;

}  // namespace

TcpLink::TcpLink(int self, int peer, net::Fd fd, std::string peer_addr, int keepalive_s)
    : Link(self, peer), fd_(std::move(fd)), peer_addr_(std::move(peer_addr)), stall_(keepalive_s) {}

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
    // A peer that failed closes its end after an abort frame, which may sit behind
    // messages still to be read: read on, so the error can carry the peer's cause.
    Result<bool> r = ProgressRecvs();
    failed_ = !r.ok() && peer_failed_ ? r.status() : PeerCauseOr(s.status());
    return failed_;
  }
  Result<bool> r = ProgressRecvs();
  if (!r.ok()) {
    failed_ = r.status();
    return failed_;
  }
  if (s.value() || r.value()) {
    stall_.Moved();
    return true;
  }
  if (Busy()) {
    std::string stall = stall_.Check(fd_.get());
    if (!stall.empty()) {
      failed_ = Unavailable(fmt::format("rank {} lost connection to rank {} (tcp {}): {}", self_,
                                        peer_, peer_addr_, stall));
      return failed_;
    }
  }
  return false;
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
  while (!inbound_.recvs.empty()) {
    RecvOp* op = inbound_.recvs.front();
    if (inbound_.header_off < kHdr) {
      // Read the header alone: its payload must not land anywhere before it is checked.
      ssize_t r =
          ::recv(fd_.get(), reinterpret_cast<uint8_t*>(&inbound_.header) + inbound_.header_off,
                 kHdr - inbound_.header_off, MSG_DONTWAIT);
      if (r == 0) return ConnectionError(0, inbound_.header_off > 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return ConnectionError(errno, inbound_.header_off > 0);
      }
      inbound_.header_off += static_cast<uint64_t>(r);
      moved = true;
      if (inbound_.header_off < kHdr) continue;
      if (IsAbortFrame(inbound_.header)) {
        if (inbound_.header.bytes > kMaxAbortText)
          return ProtocolError(fmt::format("rank {}: abort frame of {} bytes from rank {} (tcp {})",
                                           self_, inbound_.header.bytes, peer_, peer_addr_));
        abort_text_.clear();
      } else {
        WEFT_RETURN_IF_ERROR(
            CheckHeader(inbound_.header, op->expect, self_, peer_, "tcp " + peer_addr_));
      }
    }
    if (IsAbortFrame(inbound_.header)) {
      Result<bool> r = ReadAbortText();
      if (!r.ok()) return r.status();
      return moved || r.value();
    }
    if (inbound_.payload_off < op->expect.bytes) {
      ssize_t r = ::recv(fd_.get(), static_cast<uint8_t*>(op->data) + inbound_.payload_off,
                         op->expect.bytes - inbound_.payload_off, MSG_DONTWAIT);
      if (r == 0) return ConnectionError(0, true);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return ConnectionError(errno, true);
      }
      inbound_.payload_off += static_cast<uint64_t>(r);
      op->landed = inbound_.payload_off;
      moved = true;
      if (inbound_.payload_off < op->expect.bytes) continue;
    }
    inbound_.CompleteFront();
    moved = true;
  }
  return moved;
}

Result<Link::Peeked> TcpLink::PeekHeader() {
  if (!failed_.ok()) return failed_;
  if (!inbound_.recvs.empty() || inbound_.header_off != 0) return Peeked{};
  WireHeader h;
  ssize_t r;
  do {
    r = ::recv(fd_.get(), &h, kHdr, MSG_DONTWAIT | MSG_PEEK);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return Peeked{std::nullopt, true};  // end of stream at a message boundary
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Peeked{};
    failed_ = ConnectionError(errno, false);
    return failed_;
  }
  if (static_cast<uint64_t>(r) < kHdr) return Peeked{};  // the rest is on its way
  if (IsAbortFrame(h)) {  // the peer failed: take the frame and report its cause
    failed_ = PeerCauseOr(ConnectionError(0, false));
    return failed_;
  }
  return Peeked{h, false};
}

Result<bool> TcpLink::ReadAbortText() {
  bool moved = false;
  char buf[kMaxAbortText];
  while (abort_text_.size() < inbound_.header.bytes) {
    ssize_t r = ::recv(fd_.get(), buf, inbound_.header.bytes - abort_text_.size(), MSG_DONTWAIT);
    if (r == 0) break;  // what arrived is all there is
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return moved;
      break;
    }
    abort_text_.append(buf, static_cast<size_t>(r));
    moved = true;
  }
  peer_failed_ = true;
  return PeerFailed(self_, peer_, "tcp " + peer_addr_, abort_text_);
}

Status TcpLink::PeerCauseOr(Status err) {
  if (inbound_.header_off != 0) return err;  // not at a message boundary
  WireHeader h;
  ssize_t r = ::recv(fd_.get(), &h, kHdr, MSG_DONTWAIT | MSG_PEEK);
  if (r != static_cast<ssize_t>(kHdr) || !IsAbortFrame(h) || h.bytes > kMaxAbortText) return err;
  if (::recv(fd_.get(), &inbound_.header, kHdr, MSG_DONTWAIT) != static_cast<ssize_t>(kHdr))
    return err;
  abort_text_.clear();
  Result<bool> text = ReadAbortText();
  if (text.ok()) return PeerFailed(self_, peer_, "tcp " + peer_addr_, abort_text_);
  return text.status();
}

size_t TcpLink::WriteNow(const void* data, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::send(fd_.get(), static_cast<const uint8_t*>(data) + done, n - done,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  return done;
}

void TcpLink::SendAbort(const Status& cause) {
  if (!fd_.valid()) return;
  // A frame must not land inside a payload: finish the message in progress first, if
  // the socket takes the rest of it now; otherwise the peer reads "peer closed".
  if (send_off_ > 0 && !sends_.empty()) {
    SendOp* op = sends_.front();
    if (send_off_ < kHdr) {
      size_t want = kHdr - send_off_;
      size_t n = WriteNow(reinterpret_cast<uint8_t*>(&op->header) + send_off_, want);
      send_off_ += n;
      if (n < want) return;
    }
    uint64_t done = send_off_ - kHdr;
    size_t want = op->header.bytes - done;
    if (WriteNow(static_cast<const uint8_t*>(op->data) + done, want) < want) return;
    sends_.pop_front();
    send_off_ = 0;
  }
  std::string text = AbortText(cause);
  std::string frame(kHdr + text.size(), '\0');
  WireHeader h = AbortHeader(cause.code(), text.size());
  std::memcpy(frame.data(), &h, kHdr);
  std::memcpy(frame.data() + kHdr, text.data(), text.size());
  WriteNow(frame.data(), frame.size());
}

void TcpLink::Shutdown() {
  // The peer reads end-of-stream; our later reads fail fast too.
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace weft::transport::tcp
