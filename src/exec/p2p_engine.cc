#include "exec/p2p_engine.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft::exec {

transport::WireHeader P2PEngine::Header(uint64_t seq, DataType dtype, size_t bytes) const {
  transport::WireHeader h;
  h.kind = transport::kPointToPoint;
  h.seq = seq;
  h.step = 0;
  h.dtype_op = transport::PackDtypeOp(static_cast<uint32_t>(dtype), 0);
  h.bytes = bytes;
  return h;
}

void P2PEngine::Track(transport::Link* link) {
  if (std::find(links_.begin(), links_.end(), link) == links_.end()) links_.push_back(link);
}

void P2PEngine::PostSend(int peer, uint64_t seq, DataType dtype, const void* data, size_t bytes,
                         const Deadline& deadline, Done done) {
  Op& op = ops_.emplace_back(Op{true, peer, deadline, std::move(done), {}, {}});
  op.send.header = Header(seq, dtype, bytes);
  op.send.data = data;
  transport::Link* link = mesh_->link(peer);
  link->PostSend(&op.send);
  Track(link);
  backoff_.Reset();
}

void P2PEngine::PostRecv(int peer, uint64_t seq, DataType dtype, void* data, size_t bytes,
                         const Deadline& deadline, Done done) {
  Op& op = ops_.emplace_back(Op{false, peer, deadline, std::move(done), {}, {}});
  op.recv.expect = Header(seq, dtype, bytes);
  op.recv.data = data;
  transport::Link* link = mesh_->link(peer);
  link->PostRecv(&op.recv);
  Track(link);
  backoff_.Reset();
}

Result<bool> P2PEngine::Poll() {
  bool moved = false;
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
  // Sleep briefly: the worker also has to notice newly submitted calls.
  backoff_.Idle(links_, soonest, /*max_poll_ms=*/1);
}

void P2PEngine::FailAll(const Status& status) {
  for (auto& op : ops_) op.done(status);
  failed_.splice(failed_.end(), ops_);
  links_.clear();
  // An Idle() pass may have left links armed (Link::ArmWake), and an abort frees the
  // links right after this call: disarm them now, not in ~Backoff.
  backoff_.Reset();
}

}  // namespace weft::exec
