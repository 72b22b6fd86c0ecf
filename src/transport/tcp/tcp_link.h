// A Link to a peer over one connected TCP socket. Each message is its 32-byte WireHeader
// followed by the payload. Sends gather headers and payloads of queued ops into one
// sendmsg(2); receives read the header first, check it against the front RecvOp, and only
// then read the payload straight into the user's buffer (no staging copy).
//
// Bytes of a message for which no RecvOp is posted yet are left in the socket (the
// kernel buffers them, and TCP flow control holds the sender back), so the link never
// needs memory of its own for early messages.
//
// A header of kind kAbortFrame (wire.h) ends the link with the peer's cause. A peer that
// stops acknowledging while we wait on it fails the link too (stall_detector.h).
//
// Never blocks: every syscall is MSG_DONTWAIT. The executor polls PollFd() for POLLIN,
// and for POLLOUT while WantsWrite().
//
// Thread-safety: one thread at a time per link.
#pragma once

#include <deque>
#include <string>

#include "net/socket.h"
#include "transport/inbound.h"
#include "transport/link.h"
#include "transport/tcp/stall_detector.h"
#include "transport/tcp/tcp_setup.h"

namespace weft::transport::tcp {

class TcpLink final : public Link {
 public:
  // `fd`: a connected stream socket (TCP; a socketpair in tests). `peer_addr` names the
  // peer's address in error messages ("10.0.0.2:4312"). `keepalive_s`: WEFT_TCP_KEEPALIVE
  // as the mesh read it, which also bounds a stall (0: no stall detection).
  TcpLink(int self, int peer, net::Fd fd, std::string peer_addr,
          int keepalive_s = kDefaultKeepAliveS);

  void PostSend(SendOp* op) override { sends_.push_back(op); }
  void PostRecv(RecvOp* op) override { inbound_.recvs.push_back(op); }
  Result<bool> Progress() override;
  bool Busy() const override { return !sends_.empty() || !inbound_.recvs.empty(); }
  int PollFd() const override { return fd_.get(); }
  void Shutdown() override;
  void SendAbort(const Status& cause) override;
  bool WantsWrite() const override { return !sends_.empty(); }
  // True while a posted receive waits for bytes (RailLink polls a rail for POLLIN only
  // then, so data queued for a later receive does not wake it).
  bool WantsRead() const override { return !inbound_.recvs.empty(); }
  bool CanPeek() const override { return true; }
  Result<Peeked> PeekHeader() override;
  const char* Name() const override { return "tcp"; }

 private:
  Result<bool> ProgressSends();
  Result<bool> ProgressRecvs();
  // Unavailable (closed/reset) or SystemError for a failed send/recv; `err` is errno,
  // 0 for EOF.
  Status ConnectionError(int err, bool mid_message) const;
  // Reads the cause text of an abort frame whose header is in inbound_.header: false while
  // more is to come, else the PeerFailed error.
  Result<bool> ReadAbortText();
  // After a failed send: if the peer's abort frame is waiting at a message boundary,
  // its cause replaces `err`.
  Status PeerCauseOr(Status err);
  // Non-blocking writes of [data, data + n): how many bytes the socket took.
  size_t WriteNow(const void* data, size_t n);

  net::Fd fd_;
  std::string peer_addr_;

  std::deque<SendOp*> sends_;
  uint64_t send_off_ = 0;  // bytes of the front send (header + payload) already sent

  Inbound inbound_;
  std::string abort_text_;    // cause text of an abort frame being read
  bool peer_failed_ = false;  // an abort frame was read: the error is the peer's cause

  StallDetector stall_;  // a peer that stopped acknowledging mid-transfer

  Status failed_;
};

}  // namespace weft::transport::tcp
