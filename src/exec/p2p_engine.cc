#include "exec/p2p_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace weft::exec {

P2PEngine::P2PEngine(transport::Mesh* mesh)
    : mesh_(mesh),
      recv_seq_(mesh->size(), 0),
      link_recvs_(mesh->size(), 0),
      left_at_link_(mesh->size()),
      wanted_(mesh->size(), 0),
      parked_(mesh->size(), 0),
      backoff_(Oversubscribed(*mesh)) {}

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
  } else if (!mesh_->link(peer)->CanPeek()) {
    // In the order posted, the tag checked by the link. No receive from any source can
    // be waiting: it needs every link to look ahead.
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
  ++link_recvs_[peer];
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

Result<bool> P2PEngine::Match() {
  WEFT_ASSIGN_OR_RETURN(bool delivered, DeliverHeld());
  if (waiting_.empty()) return delivered;
  WEFT_ASSIGN_OR_RETURN(bool arrived, MatchArrived());
  return delivered || arrived;
}

Result<bool> P2PEngine::DeliverHeld() {
  bool moved = false;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Waiting& w = *it;
    // In the order posted, each receive is promised the first held message it names, in
    // the order they arrived: messages with one tag from one peer stay in order.
    if (w.bound == nullptr) {
      for (Unexpected& u : unexpected_) {
        if (u.bound || !Names(w, u.peer, u.recv.expect.step)) continue;
        u.bound = true;
        w.bound = &u;
        break;
      }
    }
    if (w.bound == nullptr || !w.bound->landed) {
      ++it;
      continue;
    }
    Unexpected& u = *w.bound;
    const transport::WireHeader& got = u.recv.expect;
    // The data type and size must be the receive's, as a link checks them.
    WEFT_RETURN_IF_ERROR(transport::CheckHeader(got, Header(got.seq, w.tag, w.dtype, w.bytes),
                                                mesh_->rank(), u.peer));
    if (!u.bytes.empty()) std::memcpy(w.data, u.bytes.data(), u.bytes.size());
    if (w.source != nullptr) *w.source = u.peer;
    unexpected_bytes_ -= u.bytes.size();
    unexpected_.remove_if([&](const Unexpected& x) { return &x == &u; });
    Done done = std::move(w.done);
    it = waiting_.erase(it);
    done(Status::Ok());
    moved = true;
  }
  return moved;
}

void P2PEngine::PeersWanted() {
  std::fill(wanted_.begin(), wanted_.end(), 0);
  for (const Waiting& w : waiting_) {
    if (w.bound != nullptr) continue;
    if (w.peer != kAnySource) {
      wanted_[w.peer] = 1;
      continue;
    }
    std::fill(wanted_.begin(), wanted_.end(), 1);
    break;
  }
  wanted_[mesh_->rank()] = 0;
}

Result<bool> P2PEngine::MatchArrived() {
  PeersWanted();
  const int n = mesh_->size();
  const int self = mesh_->rank();
  bool moved = false;
  bool any_open = false;
  for (int i = 0; i < n; ++i) {
    const int peer = (next_source_ + i) % n;
    if (!wanted_[peer]) continue;
    // Its next message is on its way to a receive: look again once that has landed.
    if (link_recvs_[peer] > 0) {
      any_open = true;
      continue;
    }
    transport::Link* link = mesh_->link(peer);
    auto next = link->PeekHeader();
    if (!next.ok()) {  // a peer that failed fails this rank too, with its cause
      return next.status().WithContext(fmt::format(
          "rank {}: point-to-point receive ({} link to rank {})", self, link->Name(), peer));
    }
    left_at_link_[peer].reset();
    parked_[peer] = 0;
    if (next.value().closed) {
      // A peer that is done (closed its end) sends nothing more: a receive naming it can
      // never complete; one from any source may still be answered by another.
      for (const Waiting& w : waiting_) {
        if (w.peer != peer || w.bound != nullptr) continue;
        return Unavailable(fmt::format(
            "rank {}: recv of {} bytes with tag {} from rank {}: rank {} has closed its end (it "
            "is done, its communicator destroyed) without sending that message{}",
            self, w.bytes, static_cast<int32_t>(w.tag), peer, peer, NotTakenFrom(peer)));
      }
      parked_[peer] = 1;
      continue;
    }
    any_open = true;
    const std::optional<transport::WireHeader>& header = next.value().header;
    if (!header) continue;
    if (header->kind != transport::kPointToPoint) {
      // The peer has gone on to a collective, which this rank cannot start before its
      // receives are done: a receive naming the peer can never complete.
      for (const Waiting& w : waiting_) {
        if (w.peer != peer || w.bound != nullptr) continue;
        return InvalidUsage(fmt::format(
            "rank {}: recv of {} bytes with tag {} from rank {}: rank {} sent {} next, with no "
            "message of that tag before it (the ranks made different calls){}",
            self, w.bytes, static_cast<int32_t>(w.tag), peer, peer, transport::Describe(*header),
            NotTakenFrom(peer)));
      }
      parked_[peer] = 1;  // only a receive from any source waits: another peer may answer it
      continue;
    }
    // Garbage (no weft magic or version) is refused before its size is believed.
    WEFT_RETURN_IF_ERROR(transport::CheckHeader(*header, *header, self, peer));
    const uint32_t tag = header->step;
    auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) {
      return w.bound == nullptr && Names(w, peer, tag);
    });
    if (it != waiting_.end()) {
      Waiting w = std::move(*it);
      waiting_.erase(it);
      PostToLink(peer, std::move(w));
      next_source_ = (peer + 1) % n;  // the next look starts after this peer: no starving
      moved = true;
      continue;
    }
    if (unexpected_bytes_ + header->bytes > kUnexpectedBytes) {
      left_at_link_[peer] = *header;  // until a receive names it
      parked_[peer] = 1;
      continue;
    }
    Unexpected& u = unexpected_.emplace_back();
    u.peer = peer;
    u.bytes.resize(header->bytes);
    u.recv.expect = *header;
    u.recv.expect.seq = TakeRecvSeq(peer);  // the link checks it: no message lost or repeated
    u.recv.data = u.bytes.data();
    unexpected_bytes_ += header->bytes;
    ++landing_;
    ++link_recvs_[peer];
    link->PostRecv(&u.recv);
    Track(link);
    moved = true;
  }
  if (!any_open) {
    for (const Waiting& w : waiting_) {
      if (w.peer != kAnySource || w.bound != nullptr) continue;
      return Unavailable(fmt::format(
          "rank {}: receive from any source: every peer has closed its end, so no message "
          "can come",
          self));
    }
  }
  return moved;
}

std::string P2PEngine::NotTakenFrom(int peer) const {
  std::string out;
  int listed = 0;
  for (const Unexpected& u : unexpected_) {
    if (u.bound || (peer != kAnySource && u.peer != peer)) continue;
    if (listed++ == 4) {
      out += ", ...";
      break;
    }
    out += fmt::format("{} rank {} tag {} ({} bytes)", out.empty() ? "" : ",", u.peer,
                       static_cast<int32_t>(u.recv.expect.step), u.recv.expect.bytes);
  }
  if (!out.empty()) out = "; sent meanwhile and not taken by any receive:" + out;
  for (int p = 0; p < mesh_->size(); ++p) {
    if ((peer != kAnySource && p != peer) || !left_at_link_[p]) continue;
    out += fmt::format(
        "; rank {}'s next message (tag {}, {} bytes) waits at the link for a receive naming "
        "it: it does not fit in the {} MiB weft holds for messages no receive names yet",
        p, static_cast<int32_t>(left_at_link_[p]->step), left_at_link_[p]->bytes,
        kUnexpectedBytes >> 20);
  }
  return out;
}

Result<bool> P2PEngine::Poll() {
  bool moved = false;
  if (!waiting_.empty()) {
    WEFT_ASSIGN_OR_RETURN(moved, Match());
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
      if (!it->is_send) --link_recvs_[it->peer];
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
  if (landing_ > 0) {
    for (Unexpected& u : unexpected_) {
      if (u.landed || !u.recv.done) continue;
      u.landed = true;
      --landing_;
      --link_recvs_[u.peer];
      moved = true;  // a receive may take it, and its link may show the next message
    }
  }
  if (check_deadlines) {
    for (const Waiting& w : waiting_) {
      if (!w.deadline.expired()) continue;
      return DeadlineExceeded(
          fmt::format("rank {}: recv of {} bytes with tag {} from {} timed out ({}){}",
                      mesh_->rank(), w.bytes, static_cast<int32_t>(w.tag),
                      w.peer == kAnySource ? "any source" : fmt::format("rank {}", w.peer),
                      kTimeoutSources, NotTakenFrom(w.peer)));
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
  // Besides the busy links, the links whose next message a waiting receive may take, so
  // that its arrival wakes this rank; not those parked (their next message, or their
  // end, is there and cannot be taken now: a readable socket would wake it at once).
  watch_.clear();
  if (!waiting_.empty()) {
    PeersWanted();
    for (int peer = 0; peer < mesh_->size(); ++peer) {
      if (wanted_[peer] && link_recvs_[peer] == 0 && !parked_[peer])
        watch_.push_back(mesh_->link(peer));
    }
  }
  // Sleep briefly: the worker also has to notice newly submitted calls.
  backoff_.Idle(links_, soonest, /*max_poll_ms=*/1, &watch_);
}

void P2PEngine::FailAll(const Status& status) {
  for (auto& op : ops_) op.done(status);
  failed_.splice(failed_.end(), ops_);
  for (auto& w : waiting_) w.done(status);
  waiting_.clear();
  // Held messages stay allocated until the engine goes: a link may still hold a pointer
  // to one whose bytes were landing.
  landing_ = 0;
  links_.clear();
  // An Idle() pass may have left links armed (Link::ArmWake), and an abort frees the
  // links right after this call: disarm them now, not in ~Backoff.
  backoff_.Reset();
}

}  // namespace weft::exec
