#include "exec/p2p_engine.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft::exec {

P2PEngine::P2PEngine(transport::Mesh* mesh)
    : mesh_(mesh), recv_seq_(mesh->size(), 0), backoff_(Oversubscribed(*mesh)) {}

transport::WireHeader P2PEngine::Header(uint64_t seq, uint32_t tag, DataType dtype,
                                        size_t bytes) const {
  transport::WireHeader h;
  h.kind = transport::kPointToPoint;
  h.seq = seq;
  h.step = tag;  // a p2p call is one message: its step field carries the tag (wire.h)
  h.dtype_op = transport::PackDtypeOp(static_cast<uint32_t>(dtype), 0);
  h.bytes = bytes;
  return h;
}

void P2PEngine::Track(transport::Link* link) {
  if (std::find(links_.begin(), links_.end(), link) == links_.end()) links_.push_back(link);
}

void P2PEngine::PostSend(int peer, uint64_t seq, uint32_t tag, DataType dtype, const void* data,
                         size_t bytes, const Deadline& deadline, Done done) {
  Op& op = ops_.emplace_back(Op{true, peer, deadline, std::move(done), {}, {}});
  op.send.header = Header(seq, tag, dtype, bytes);
  op.send.data = data;
  transport::Link* link = mesh_->link(peer);
  link->PostSend(&op.send);
  Track(link);
  backoff_.Reset();
}

void P2PEngine::PostRecv(int peer, uint32_t tag, DataType dtype, void* data, size_t bytes,
                         const Deadline& deadline, Done done, int* source) {
  Waiting w{peer, tag, dtype, data, bytes, deadline, std::move(done), source};
  if (peer == kAnySource) {
    Status refused = AnySourceRefusal();
    if (!refused.ok()) {
      w.done(std::move(refused));
      return;
    }
  } else if (waiting_.empty()) {
    PostToLink(peer, std::move(w));
    return;
  }
  waiting_.push_back(std::move(w));
  backoff_.Reset();
}

void P2PEngine::PostToLink(int peer, Waiting w) {
  Op& op = ops_.emplace_back(Op{false, peer, w.deadline, std::move(w.done), {}, {}});
  op.recv.expect = Header(TakeRecvSeq(peer), w.tag, w.dtype, w.bytes);
  op.recv.data = w.data;
  if (w.source != nullptr) *w.source = peer;
  transport::Link* link = mesh_->link(peer);
  link->PostRecv(&op.recv);
  Track(link);
  backoff_.Reset();
}

Status P2PEngine::AnySourceRefusal() const {
  const int self = mesh_->rank();
  if (mesh_->size() < 2) {
    return InvalidArgument(
        fmt::format("rank {}: a receive from any source has no peer in a world of one", self));
  }
  for (int peer = 0; peer < mesh_->size(); ++peer) {
    if (peer == self || mesh_->link(peer)->CanPeek()) continue;
    return InvalidArgument(fmt::format(
        "rank {}: a receive from any source looks at each peer's next message first, and the "
        "{} link to rank {} cannot (ofi links and links striped over several rails cannot; "
        "tcp with one rail and shm can)",
        self, mesh_->link(peer)->Name(), peer));
  }
  return Status::Ok();
}

Result<int> P2PEngine::ChooseSource() {
  const int n = mesh_->size();
  bool any_open = false;
  for (int i = 0; i < n; ++i) {
    const int peer = (next_source_ + i) % n;
    if (peer == mesh_->rank()) continue;
    transport::Link* link = mesh_->link(peer);
    auto next = link->PeekHeader();
    if (!next.ok()) {  // a peer that failed fails this rank too, with its cause
      return next.status().WithContext(
          fmt::format("rank {}: receive from any source ({} link to rank {})", mesh_->rank(),
                      link->Name(), peer));
    }
    // A peer that is done (closed its end) sends nothing more; another may still send.
    if (next.value().closed) continue;
    any_open = true;
    // A peer whose next message belongs to a collective is not sending to this rank now.
    const std::optional<transport::WireHeader>& header = next.value().header;
    if (!header || header->kind != transport::kPointToPoint) continue;
    next_source_ = (peer + 1) % n;  // the next choice starts after this peer: no starving
    return peer;
  }
  if (!any_open) {
    return Unavailable(fmt::format(
        "rank {}: receive from any source: every peer has closed its end, so no message can come",
        mesh_->rank()));
  }
  return -1;
}

Result<bool> P2PEngine::AdmitWaiting() {
  bool moved = false;
  while (!waiting_.empty()) {
    int peer = waiting_.front().peer;
    if (peer == kAnySource) {
      WEFT_ASSIGN_OR_RETURN(peer, ChooseSource());
      if (peer < 0) break;
    }
    Waiting w = std::move(waiting_.front());
    waiting_.pop_front();
    PostToLink(peer, std::move(w));
    moved = true;
  }
  return moved;
}

Result<bool> P2PEngine::Poll() {
  bool moved = false;
  if (!waiting_.empty()) {
    WEFT_ASSIGN_OR_RETURN(moved, AdmitWaiting());
  }
  for (auto* link : links_) {
    if (!link->Busy()) continue;
    auto r = link->Progress();
    if (!r.ok()) {
      return r.status().WithContext(fmt::format("rank {}: point-to-point ({} link to rank {})",
                                                mesh_->rank(), link->Name(), link->peer()));
    }
    moved |= r.value();
  }
  // The clock is read every kDeadlineCheckEvery passes only: it costs as much as a
  // small message.
  const bool check_deadlines = ++passes_ % kDeadlineCheckEvery == 0;
  for (auto it = ops_.begin(); it != ops_.end();) {
    bool done = it->is_send ? it->send.done : it->recv.done;
    if (done) {
      it->done(Status::Ok());
      it = ops_.erase(it);
      continue;
    }
    if (check_deadlines && it->deadline.expired()) {
      return DeadlineExceeded(fmt::format(
          "rank {}: {} of {} bytes {} rank {} timed out ({})", mesh_->rank(),
          it->is_send ? "send" : "recv",
          it->is_send ? it->send.header.bytes : it->recv.expect.bytes,
          it->is_send ? "to" : "from", it->peer, kTimeoutSources));
    }
    ++it;
  }
  if (check_deadlines) {
    for (const Waiting& w : waiting_) {
      if (!w.deadline.expired()) continue;
      return DeadlineExceeded(fmt::format(
          "rank {}: recv of {} bytes from {} timed out ({})", mesh_->rank(), w.bytes,
          w.peer == kAnySource ? "any source"
                               : fmt::format("rank {} (behind a receive from any source)", w.peer),
          kTimeoutSources));
    }
  }
  links_.erase(std::remove_if(links_.begin(), links_.end(),
                              [](transport::Link* l) { return !l->Busy(); }),
               links_.end());
  if (moved) backoff_.Reset();
  return moved;
}

void P2PEngine::Idle() {
  Deadline soonest = Deadline::Never();
  for (const auto& op : ops_)
    if (op.deadline.at() < soonest.at()) soonest = op.deadline;
  for (const auto& w : waiting_)
    if (w.deadline.at() < soonest.at()) soonest = w.deadline;
  // Sleep briefly: the worker also has to notice newly submitted calls (and, with a
  // receive from any source waiting, look at the links that have nothing posted).
  backoff_.Idle(links_, soonest, /*max_poll_ms=*/1);
}

void P2PEngine::FailAll(const Status& status) {
  for (auto& op : ops_) op.done(status);
  failed_.splice(failed_.end(), ops_);
  for (auto& w : waiting_) w.done(status);
  waiting_.clear();
  links_.clear();
  // An Idle() pass may have left links armed (Link::ArmWake), and an abort frees the
  // links right after this call: disarm them now, not in ~Backoff.
  backoff_.Reset();
}

}  // namespace weft::exec
