#include "transport/ofi/ofi_link.h"

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "transport/ofi/fabric_lib.h"

namespace weft::transport::ofi {
namespace {

constexpr uint64_t kHdr = sizeof(WireHeader);
constexpr uint64_t kControlBit = uint64_t{1} << 63;
// The peer's control message (received) and ours (sent).
constexpr int kControlInPart = -1;
constexpr int kControlOutPart = -2;

}  // namespace

uint64_t OfiLink::Tag(int rank, uint64_t seq, int seq_bits) {
  return (static_cast<uint64_t>(rank) << seq_bits) | (seq & ((uint64_t{1} << seq_bits) - 1));
}

uint64_t OfiLink::ControlTag(int rank, int seq_bits) {
  return kControlBit | (static_cast<uint64_t>(rank) << seq_bits);
}

OfiLink::OfiLink(int self, int peer, std::shared_ptr<OfiEndpoint> endpoint, uint64_t eager_bytes)
    : Link(self, peer),
      ep_(std::move(endpoint)),
      limits_(ep_->limits()),
      // Never more than this rank can take: a staged eager payload must fit its staging
      // buffer. (Mesh passes the pair's minimum, which is never more.)
      eager_bytes_(std::min(eager_bytes, limits_.eager_bytes)),
      peer_addr_(ep_->PeerAddr(peer)) {}

OfiLink::~OfiLink() {
  // Requests still posted are cancelled and orphaned: their completions (if any) find no
  // link, and the memory they may still write (staging) is not reused.
  for (Request* r : live_) {
    fi_cancel(&ep_->ep()->fid, &r->ctx);
    r->link = nullptr;
  }
  // Staging buffers are handed back only when nothing can still write into them.
  if (live_.empty()) {
    for (auto& e : sends_) ep_->ReleaseStaging(e->staging);
    for (auto& e : recvs_) ep_->ReleaseStaging(e->staging);
    ep_->ReleaseStaging(control_);
    ep_->ReleaseStaging(control_out_);
  }
}

int OfiLink::Parts(uint64_t bytes) const {
  if (bytes <= eager_bytes_) return 1;
  return 1 + static_cast<int>((bytes + limits_.max_chunk - 1) / limits_.max_chunk);
}

OfiLink::Span OfiLink::PartSpan(uint64_t bytes, int part) const {
  // Message 0 carries an eager payload or none; chunk k (1..) the k-th max_chunk.
  if (part == 0) return Span{0, bytes <= eager_bytes_ ? bytes : 0};
  uint64_t off = static_cast<uint64_t>(part - 1) * limits_.max_chunk;
  return Span{off, std::min(limits_.max_chunk, bytes - off)};
}

std::string OfiLink::Via() const { return fmt::format("ofi {}", ep_->provider()); }

Request* OfiLink::NewRequest(void* entry, int part) {
  Request* r = ep_->NewRequest(this, entry, part);
  live_.insert(r);
  return r;
}

void OfiLink::PostSend(SendOp* op) {
  auto e = std::make_unique<SendEntry>();
  e->op = op;
  e->seq = send_seq_;
  e->parts = Parts(op->header.bytes);
  send_seq_ += e->parts;
  sends_.push_back(std::move(e));
}

void OfiLink::PostRecv(RecvOp* op) {
  auto e = std::make_unique<RecvEntry>();
  e->op = op;
  e->seq = recv_seq_;
  e->chunks = Parts(op->expect.bytes) - 1;
  recv_seq_ += 1 + e->chunks;
  recvs_.push_back(std::move(e));
}

Result<bool> OfiLink::Posted(Request* req, ssize_t ret, Post post, const WireHeader* op) {
  if (ret == 0) return true;
  live_.erase(req);
  ep_->Release(req);
  if (ret == -FI_EAGAIN) return false;
  std::string err = FiError(post == Post::kSend ? "fi_tsend" : "fi_trecv", static_cast<int>(ret));
  if (post == Post::kControlReceive)
    return Unavailable(fmt::format("rank {}: posting the control receive from rank {} ({}): {}",
                                   self_, peer_, Via(), err));
  if (post == Post::kSend)
    return Unavailable(fmt::format("rank {}: sending {} to rank {} ({}): {}", self_, Describe(*op),
                                   peer_, Via(), err));
  return Unavailable(fmt::format("rank {}: receiving {} from rank {} ({}): {}", self_,
                                 Describe(*op), peer_, Via(), err));
}

Status OfiLink::PostSends() {
  fid_ep* ep = ep_->ep();
  for (auto& up : sends_) {
    SendEntry* e = up.get();
    while (e->posted < e->parts) {
      int part = e->posted;
      Span span = PartSpan(e->op->header.bytes, part);
      const uint8_t* payload = static_cast<const uint8_t*>(e->op->data) + span.off;
      uint64_t tag = Tag(self_, e->seq + part, limits_.seq_bits);
      Request* req = NewRequest(e, part);
      ssize_t ret;
      if (part == 0) {
        // The header from staging; its payload (if any) from the user's buffer as a second
        // iovec, or copied behind the header where the provider takes one iovec only.
        bool copy = span.len > 0 && !limits_.send_iov;
        if (!e->staging.data) {
          Result<Staging> s = ep_->AcquireStaging();
          if (!s.ok()) return s.status();
          e->staging = s.value();
          std::memcpy(e->staging.data, &e->op->header, kHdr);
          if (copy) std::memcpy(e->staging.data + kHdr, payload, span.len);
        }
        if (copy || span.len == 0) {
          ret = fi_tsend(ep, e->staging.data, kHdr + (copy ? span.len : 0), e->staging.desc,
                         peer_addr_, tag, &req->ctx);
        } else {
          Result<void*> d = ep_->RegisterFor(req, payload, span.len);
          if (!d.ok()) return d.status();
          iovec iov[2] = {{e->staging.data, kHdr}, {const_cast<uint8_t*>(payload), span.len}};
          void* desc[2] = {e->staging.desc, d.value()};
          ret = fi_tsendv(ep, iov, desc, 2, peer_addr_, tag, &req->ctx);
        }
      } else {
        Result<void*> d = ep_->RegisterFor(req, payload, span.len);
        if (!d.ok()) return d.status();
        ret = fi_tsend(ep, payload, span.len, d.value(), peer_addr_, tag, &req->ctx);
      }
      WEFT_ASSIGN_OR_RETURN(bool posted, Posted(req, ret, Post::kSend, &e->op->header));
      if (!posted) return Status::Ok();
      ++e->posted;
      moved_ = true;
    }
  }
  return Status::Ok();
}

Status OfiLink::PostRecvs() {
  fid_ep* ep = ep_->ep();
  if (!control_posted_) {
    Result<Staging> s = ep_->AcquireStaging();
    if (!s.ok()) return s.status();
    control_ = s.value();
    Request* req = NewRequest(nullptr, kControlInPart);
    ssize_t ret = fi_trecv(ep, control_.data, ep_->staging_bytes(), control_.desc,
                           FI_ADDR_UNSPEC, ControlTag(peer_, limits_.seq_bits), 0, &req->ctx);
    WEFT_ASSIGN_OR_RETURN(bool posted, Posted(req, ret, Post::kControlReceive, nullptr));
    if (!posted) return Status::Ok();
    control_posted_ = true;
  }
  for (auto& up : recvs_) {
    RecvEntry* e = up.get();
    if (!e->header_posted) {
      if (!e->staging.data) {
        Result<Staging> s = ep_->AcquireStaging();
        if (!s.ok()) return s.status();
        e->staging = s.value();
      }
      Request* req = NewRequest(e, 0);
      uint64_t tag = Tag(peer_, e->seq, limits_.seq_bits);
      Span span = PartSpan(e->op->expect.bytes, 0);
      ssize_t ret;
      if (limits_.recv_iov && span.len > 0) {
        // The header into staging, the eager payload straight into the user's buffer.
        // The staging header is cleared first: after a truncated receive (the peer sent
        // more) whatever header is there must be the peer's.
        std::memset(e->staging.data, 0, kHdr);
        void* buf = static_cast<uint8_t*>(e->op->data) + span.off;
        Result<void*> d = ep_->RegisterFor(req, buf, span.len);
        if (!d.ok()) return d.status();
        // A third iovec takes what a mismatched call sends past the expected size (up to
        // an eager payload), so its header still arrives and is reported
        // (OfiEndpoint::overflow_sink).
        iovec iov[3] = {{e->staging.data, kHdr}, {buf, span.len},
                        {ep_->overflow_sink(), ep_->overflow_sink_bytes()}};
        void* desc[3] = {e->staging.desc, d.value(), nullptr};
        ret = fi_trecvv(ep, iov, desc, ep_->overflow_sink() ? 3 : 2, FI_ADDR_UNSPEC, tag, 0,
                        &req->ctx);
      } else {
        std::memset(e->staging.data, 0, kHdr);
        ret = fi_trecv(ep, e->staging.data, ep_->staging_bytes(), e->staging.desc,
                       FI_ADDR_UNSPEC, tag, 0, &req->ctx);
      }
      WEFT_ASSIGN_OR_RETURN(bool posted, Posted(req, ret, Post::kReceive, &e->op->expect));
      if (!posted) return Status::Ok();
      e->header_posted = true;
      moved_ = true;
    }
    // Payload receives: with the header receive when the provider gains from finding them
    // posted (limits_.prepost_payload), otherwise once the header has been checked.
    while ((e->header_done || limits_.prepost_payload) && e->chunks_posted < e->chunks) {
      int part = e->chunks_posted + 1;
      Span span = PartSpan(e->op->expect.bytes, part);
      void* buf = static_cast<uint8_t*>(e->op->data) + span.off;
      size_t len = span.len;
      Request* req = NewRequest(e, part);
      Result<void*> d = ep_->RegisterFor(req, buf, len);
      if (!d.ok()) return d.status();
      ssize_t ret = fi_trecv(ep, buf, len, d.value(), FI_ADDR_UNSPEC,
                             Tag(peer_, e->seq + part, limits_.seq_bits), 0, &req->ctx);
      WEFT_ASSIGN_OR_RETURN(bool posted, Posted(req, ret, Post::kReceive, &e->op->expect));
      if (!posted) return Status::Ok();
      ++e->chunks_posted;
      moved_ = true;
    }
  }
  return Status::Ok();
}

Status OfiLink::HeaderArrived(RecvEntry* e, size_t len) {
  if (len < kHdr)
    return ProtocolError(fmt::format("rank {} received garbage from rank {} ({}): a {}-byte "
                                     "message where a header was expected",
                                     self_, peer_, Via(), len));
  WireHeader got;
  std::memcpy(&got, e->staging.data, kHdr);
  WEFT_RETURN_IF_ERROR(CheckHeader(got, e->op->expect, self_, peer_, Via()));
  uint64_t inline_bytes = PartSpan(got.bytes, 0).len;
  if (len != kHdr + inline_bytes)
    return ProtocolError(fmt::format("rank {} received garbage from rank {} ({}): header for {} "
                                     "with {} bytes after it, expected {}",
                                     self_, peer_, Via(), Describe(got), len - kHdr, inline_bytes));
  // Received in place (recv_iov), the payload is already in the user's buffer.
  if (inline_bytes > 0 && !limits_.recv_iov)
    std::memcpy(e->op->data, e->staging.data + kHdr, inline_bytes);
  e->header_done = true;
  return e->payload_error;  // a payload error that waited for the header to check out
}

void OfiLink::OnComplete(Request* req, size_t len) {
  live_.erase(req);
  moved_ = true;
  if (req->part == kControlOutPart) {
    control_out_sent_ = true;
    return;
  }
  if (req->part == kControlInPart) {
    ControlArrived(len);
    return;
  }
  // Sends and receives are told apart by which queue holds the entry.
  for (auto& s : sends_) {
    if (s.get() == req->entry) {
      ++s->completed;
      return;
    }
  }
  for (auto& r : recvs_) {
    if (r.get() != req->entry) continue;
    if (req->part == 0) {
      Status st = HeaderArrived(r.get(), len);
      if (!st.ok() && failed_.ok()) failed_ = st;
    } else {
      uint64_t want = PartSpan(r->op->expect.bytes, req->part).len;
      if (len != want) {
        PayloadFailed(r.get(), ProtocolError(fmt::format(
            "rank {} received garbage from rank {} ({}): chunk {} of {} is {} bytes, expected {}",
            self_, peer_, Via(), req->part, Describe(r->op->expect), len, want)));
      }
      ++r->chunks_completed;
    }
    return;
  }
}

void OfiLink::OnError(Request* req, int err, const std::string& why) {
  live_.erase(req);
  if (req->part == kControlOutPart) return;  // the peer learns at its deadline instead
  if (!failed_.ok()) return;
  failed_by_provider_ = true;
  if (err == FI_ECANCELED) {
    failed_ = Unavailable(fmt::format("rank {}: an operation with rank {} ({}) was cancelled",
                                      self_, peer_, Via()));
    return;
  }
  bool is_send = false;
  for (auto& s : sends_) is_send = is_send || s.get() == req->entry;
  std::string what = req->part == kControlInPart ? "waiting for the peer's control message"
                     : is_send       ? "sending to"
                                     : "receiving from";
  if (err == FI_ETRUNC && req->part == 0 && limits_.recv_iov) {
    // The peer's header message was larger than the receive posted in place (no
    // overflow sink, or over it): when its header arrived, a different call says more.
    for (auto& r : recvs_) {
      if (r.get() != req->entry) continue;
      WireHeader got;
      std::memcpy(&got, r->staging.data, kHdr);
      Status mismatch = CheckHeader(got, r->op->expect, self_, peer_, Via());
      if (mismatch.code() != Code::kInvalidUsage) {
        // No header (rxm delivers nothing of a truncated message): only a different call
        // sends a first message larger than the header and its chunk.
        mismatch = InvalidUsage(fmt::format(
            "rank {} expected {} from rank {}, but rank {} sent a larger message (more than "
            "the overflow room): the ranks made different calls ({})",
            self_, Describe(r->op->expect), peer_, peer_, Via()));
      }
      failed_ = mismatch;
      return;
    }
  }
  Code code = err == FI_ETRUNC ? Code::kProtocolError : Code::kUnavailable;
  Status st(code, fmt::format("rank {}: {} rank {} ({}) failed: {}", self_, what, peer_, Via(), why));
  for (auto& r : recvs_) {
    if (r.get() == req->entry && req->part > 0) {
      PayloadFailed(r.get(), st);
      return;
    }
  }
  failed_ = st;
}

void OfiLink::PayloadFailed(RecvEntry* e, const Status& st) {
  // A pre-posted payload receive can fail (a larger message: FI_ETRUNC) or complete short
  // before its header is checked, when the peer made another call. The header's
  // mismatch names both calls and says more: hold this error until the header is in.
  if (e->header_done) {
    if (failed_.ok()) failed_ = st;
  } else if (e->payload_error.ok()) {
    e->payload_error = st;
  }
}

void OfiLink::Retire() {
  while (!sends_.empty() && sends_.front()->completed == sends_.front()->parts) {
    SendEntry* e = sends_.front().get();
    e->op->done = true;
    ep_->ReleaseStaging(e->staging);
    sends_.pop_front();
    moved_ = true;
  }
  while (!recvs_.empty() && recvs_.front()->header_done &&
         recvs_.front()->chunks_completed == recvs_.front()->chunks) {
    RecvEntry* e = recvs_.front().get();
    e->op->done = true;
    ep_->ReleaseStaging(e->staging);
    recvs_.pop_front();
    moved_ = true;
  }
}

Result<bool> OfiLink::Progress() {
  if (!failed_.ok()) return failed_;
  moved_ = false;
  Result<int> polled = ep_->Poll();
  if (!polled.ok()) {
    failed_ = polled.status().WithContext(fmt::format("rank {} with rank {}", self_, peer_));
    return failed_;
  }
  // A peer that failed may have been reported by the provider (its connection closing)
  // in the same poll as its abort frame: its own cause says more.
  if (failed_by_provider_ && !peer_cause_.ok()) failed_ = peer_cause_;
  if (!failed_.ok()) return failed_;
  Status s = PostRecvs();
  if (s.ok()) s = PostSends();
  if (!s.ok()) {
    failed_ = s;
    return failed_;
  }
  Retire();
  if (peer_closed_ && Busy() && !moved_ &&
      std::chrono::steady_clock::now() - closed_at_ > kClosedGrace) {
    failed_ = PeerGone();
    return failed_;
  }
  return moved_;
}

void OfiLink::ControlArrived(size_t len) {
  peer_closed_ = true;
  closed_at_ = std::chrono::steady_clock::now();
  WireHeader h;
  if (len < kHdr) return;
  std::memcpy(&h, control_.data, kHdr);
  // A bare header is a plain close; anything but a well-formed abort frame says no more.
  if (!IsAbortFrame(h) || h.bytes > kMaxAbortText || len != kHdr + h.bytes) return;
  peer_cause_ = PeerFailed(self_, peer_, Via(),
                           std::string_view(reinterpret_cast<const char*>(control_.data) + kHdr,
                                            h.bytes));
}

Status OfiLink::PeerGone() const {
  if (!peer_cause_.ok()) return peer_cause_;
  return Unavailable(
      fmt::format("rank {} lost connection to rank {} ({}): peer closed", self_, peer_, Via()));
}

void OfiLink::SendControl(const WireHeader& h, const std::string& text) {
  if (control_out_posted_) return;
  if (!control_out_.data) {
    Result<Staging> s = ep_->AcquireStaging();
    if (!s.ok()) return;
    control_out_ = s.value();
  }
  size_t n = std::min<size_t>(text.size(), ep_->staging_bytes() - kHdr);
  WireHeader out = h;
  if (IsAbortFrame(out)) out.bytes = n;
  std::memcpy(control_out_.data, &out, kHdr);
  std::memcpy(control_out_.data + kHdr, text.data(), n);
  // With manual progress a message only leaves while the endpoint is polled, and the
  // caller may close it right after: poll until the send completes, for a short while.
  Request* req = NewRequest(nullptr, kControlOutPart);
  auto until = std::chrono::steady_clock::now() + kShutdownWait;
  while (true) {
    ssize_t ret = fi_tsend(ep_->ep(), control_out_.data, kHdr + n, control_out_.desc, peer_addr_,
                           ControlTag(self_, limits_.seq_bits), &req->ctx);
    if (ret == 0) break;
    if (ret != -FI_EAGAIN || std::chrono::steady_clock::now() > until) {
      live_.erase(req);
      ep_->Release(req);
      return;
    }
    (void)ep_->Poll();
  }
  control_out_posted_ = true;
  while (!control_out_sent_ && std::chrono::steady_clock::now() < until) {
    if (!ep_->Poll().ok()) break;
  }
}

void OfiLink::SendAbort(const Status& cause) {
  std::string text = AbortText(cause);
  SendControl(AbortHeader(cause.code(), text.size()), text);
}

void OfiLink::Shutdown() {
  if (failed_.ok()) failed_ = Aborted(fmt::format("rank {}: link to rank {} shut down", self_, peer_));
  SendControl(WireHeader{}, "");  // a plain close, unless SendAbort sent the cause
}

}  // namespace weft::transport::ofi
