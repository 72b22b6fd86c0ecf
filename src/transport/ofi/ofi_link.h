// A Link to a peer over libfabric tagged messages on one of the communicator's shared RDM
// endpoints (one per rail, ofi_endpoint.h).
//
// Each op becomes one header message and, for payloads over the link's eager size, one or
// more payload messages:
//   - header message: the 32-byte WireHeader from a staging buffer, followed by the
//     payload itself when it is at most eager_bytes(). The sender gives the
//     payload as a second iovec (fi_tsendv) where the provider allows (send_iov), else
//     copies it behind the header; the receiver takes it straight into the user's buffer
//     (fi_trecvv, recv_iov: where payloads are pre-posted, below), else into staging and
//     copies it out after the header check. The bytes on the wire are the same.
//   - payload chunks: the payload straight from/into the user's buffer, in chunks of at
//     most limits().max_chunk bytes.
// The eager size is the smaller of the two ranks' ProviderLimits::eager_bytes (each
// publishes its own in the card): 1 MiB where both ranks send from and receive into the
// user's buffer (rxm over tcp), so that an op up to that is one message; otherwise what a
// staging buffer holds. Both ends must split an op alike, so it is the pair's, not
// each rank's own.
// Every message has its own tag: the sender's rank and a per-direction message number
// that both sides count the same way (an op takes Parts() numbers, known to both from
// the header's byte count). So matching never depends on the provider's message order
// (efa does not order RDM messages), and messages from different peers never match.
// A receiver posts the payload receive only after the header has been checked, so a
// mismatched call is reported (InvalidUsage naming both headers) before any payload byte
// lands in the user's buffer; until then the provider holds the payload. Where the
// provider would hold it at a cost (rxm over tcp buffers unexpected messages and copies
// them), limits().prepost_payload posts it with the header's receive instead (and an
// eager payload is received in place): the mismatch is still reported the same way (a
// payload error waits for the header's verdict; a larger eager message spills into the
// endpoint's overflow sink so that its header is still read), but the peer's bytes may
// be in the buffer by then.
//
// Each side sends its peer at most one control message (its own tag), when its
// communicator fails: SendAbort sends an abort frame (wire.h) carrying the cause, a
// Shutdown without one before it sends a bare header. A peer that receives it fails its
// pending ops with the cause it quotes ("rank 1 was told by rank 0 ... that it failed:
// ..."), or with "peer closed". A peer process that dies without it is noticed through
// the provider's errors where it reports them, otherwise at the executor's deadline.
//
// Progress() polls the endpoint's completion queue (completions for other links of the
// communicator are recorded on those links). Never blocks. PollFd() is the completion
// queue's file descriptor, shared by every link of the endpoint, when the endpoint says it
// is safe to sleep on (OfiEndpoint::WaitFd), so an idle executor sleeps in poll(2) as
// with tcp; otherwise -1 and the executor polls by hand. Thread-safety: one thread for
// all the links of one endpoint.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_set>

#include "transport/link.h"
#include "transport/ofi/ofi_endpoint.h"

namespace weft::transport::ofi {

class OfiLink final : public Link {
 public:
  // `eager_bytes`: the pair's, min of both ranks' limits().eager_bytes.
  OfiLink(int self, int peer, std::shared_ptr<OfiEndpoint> endpoint, uint64_t eager_bytes);
  ~OfiLink() override;

  void PostSend(SendOp* op) override;
  void PostRecv(RecvOp* op) override;
  Result<bool> Progress() override;
  bool Busy() const override { return !sends_.empty() || !recvs_.empty(); }
  const char* Name() const override { return "ofi"; }
  // Not a pure query: it asks the provider (fi_trywait) whether sleeping is safe now.
  int PollFd() const override { return ep_->WaitFd(); }
  void Shutdown() override;
  // Best effort, bounded by kShutdownWait: polls the endpoint until the frame has left.
  void SendAbort(const Status& cause) override;

  // Payloads up to this size travel inside the header's message.
  uint64_t eager_bytes() const { return eager_bytes_; }

  // Called by OfiEndpoint::Poll for this link's requests.
  void OnComplete(Request* req, size_t len);
  void OnError(Request* req, int err, const std::string& why);

  // The tag of message `seq` sent by `rank`; the control tag of `rank`.
  static uint64_t Tag(int rank, uint64_t seq, int seq_bits);
  static uint64_t ControlTag(int rank, int seq_bits);

  // After a peer's Shutdown is seen, how long pending ops may still complete (messages
  // sent before it may be reported after it: RDM completions are unordered).
  static constexpr std::chrono::milliseconds kClosedGrace{50};
  // How long SendAbort/Shutdown poll for the control message to leave (with manual
  // progress nothing leaves unless polled, and the endpoint may close right after); past
  // it the peer learns of the failure at its own deadline instead.
  static constexpr std::chrono::milliseconds kShutdownWait{100};

 private:
  struct SendEntry {
    SendOp* op = nullptr;
    uint64_t seq = 0;
    int parts = 1;  // 1 header message + payload chunks
    int posted = 0;
    int completed = 0;
    Staging staging;
  };
  struct RecvEntry {
    RecvOp* op = nullptr;
    uint64_t seq = 0;
    int chunks = 0;
    bool header_posted = false;
    bool header_done = false;
    int chunks_posted = 0;
    int chunks_completed = 0;
    Status payload_error;  // a payload failure seen before the header was checked
    Staging staging;
  };

  // Messages per op of `bytes` (1 + payload chunks; both sides count the same).
  int Parts(uint64_t bytes) const;
  // Which payload bytes message `part` (0: the one with the header) carries.
  struct Span {
    uint64_t off = 0;
    uint64_t len = 0;
  };
  Span PartSpan(uint64_t bytes, int part) const;
  Request* NewRequest(void* entry, int part);
  // Which kind of message a post was for, to name it in errors.
  enum class Post { kSend, kReceive, kControlReceive };
  // What the post of `req` (fi_tsend or fi_trecv, which returned `ret`) came to: true when
  // posted; false when the provider's queue is full (`req` goes back, and the caller
  // retries on the next Progress); otherwise the error, naming `op` (the message's header,
  // or the expected one; none for the control receive).
  Result<bool> Posted(Request* req, ssize_t ret, Post post, const WireHeader* op);
  Status PostSends();
  Status PostRecvs();
  void Retire();
  Status HeaderArrived(RecvEntry* e, size_t len);
  void PayloadFailed(RecvEntry* e, const Status& st);
  // The peer's control message arrived (`len` bytes in control_).
  void ControlArrived(size_t len);
  // Sends this side's one control message: header `h`, then `text`.
  void SendControl(const WireHeader& h, const std::string& text);
  // What pending ops fail with once the peer has closed.
  Status PeerGone() const;
  std::string Via() const;

  std::shared_ptr<OfiEndpoint> ep_;
  ProviderLimits limits_;
  uint64_t eager_bytes_;
  fi_addr_t peer_addr_;

  std::deque<std::unique_ptr<SendEntry>> sends_;
  std::deque<std::unique_ptr<RecvEntry>> recvs_;
  uint64_t send_seq_ = 0;
  uint64_t recv_seq_ = 0;
  std::unordered_set<Request*> live_;

  Staging control_;           // receives the peer's control message
  bool control_posted_ = false;
  bool peer_closed_ = false;
  Status peer_cause_;         // the cause quoted by the peer's abort frame, if it sent one
  std::chrono::steady_clock::time_point closed_at_;
  Staging control_out_;       // our control message (kept until the link goes)
  bool control_out_posted_ = false;
  bool control_out_sent_ = false;
  bool failed_by_provider_ = false;  // failed_ came from an error completion

  bool moved_ = false;
  Status failed_;
};

}  // namespace weft::transport::ofi
