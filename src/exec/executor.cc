#include "exec/executor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "exec/reduce.h"

namespace weft::exec {

using sched::Buf;
using sched::Slice;
using sched::Step;
using sched::StepKind;

Executor::Executor(transport::Mesh* mesh)
    : mesh_(mesh),
      send_steps_(mesh->size(), 0),
      recv_steps_(mesh->size(), 0),
      backoff_(Oversubscribed(*mesh)) {}

Status Executor::Run(const sched::Schedule& schedule, const ExecContext& ctx,
                     const Buffers& bufs) {
  ctx_ = &ctx;
  bufs_ = bufs;
  esize_ = DataTypeSize(ctx.dtype);
  std::fill(send_steps_.begin(), send_steps_.end(), 0);
  std::fill(recv_steps_.begin(), recv_steps_.end(), 0);
  const ReduceFn reduce = GetReduceFn(ctx.dtype, ctx.op);
  const ReduceIntoFn reduce_into = GetReduceIntoFn(ctx.dtype, ctx.op);
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    const auto& round = schedule.rounds[r];
    WEFT_RETURN_IF_ERROR(Communicate(round, r));
    const auto& steps = round.steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kReduce) {
        reduce(Ptr(step.dst), Ptr(step.src), step.dst.count);
      } else if (step.kind == StepKind::kCopy) {
        void* dst = Ptr(step.dst);
        const void* src = Ptr(step.src);
        if (i + 1 < steps.size() && FusesWithNext(step, steps[i + 1])) {
          reduce_into(dst, src, Ptr(steps[i + 1].src), step.dst.count);
          ++i;
        } else if (dst != src) {
          std::memmove(dst, src, step.dst.count * esize_);
        }
      }
    }
  }
  return Status::Ok();
}

// Out-of-place algorithms start a reduction with "copy x to dst; reduce y into dst"
// (sched/algorithms: ring, recursive doubling, binomial, ...). Run as dst = x (op) y,
// that is one pass over memory instead of two (the copy's write and the reduce's re-read
// of dst). The schedule stays as written: the interpreter and the simulator see the two
// steps. Allowed when the reduce's destination is exactly the copy's and the elementwise
// loop reads nothing it has already written: y does not overlap dst, and x is dst itself
// or does not overlap it (buffers can alias: an in-place call's input is its output).
bool Executor::FusesWithNext(const Step& copy, const Step& next) const {
  if (next.kind != StepKind::kReduce || next.dst.buf != copy.dst.buf ||
      next.dst.offset != copy.dst.offset || next.dst.count != copy.dst.count)
    return false;
  const size_t bytes = copy.dst.count * esize_;
  auto disjoint = [bytes](const void* p, const void* q) {
    auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
    return a + bytes <= b || b + bytes <= a;
  };
  const void* dst = Ptr(copy.dst);
  const void* x = Ptr(copy.src);
  return disjoint(Ptr(next.src), dst) && (x == dst || disjoint(x, dst));
}

void* Executor::Ptr(const Slice& s) const {
  char* base = nullptr;
  switch (s.buf) {
    case Buf::kInput: base = static_cast<char*>(const_cast<void*>(bufs_.input)); break;
    case Buf::kOutput: base = static_cast<char*>(bufs_.output); break;
    case Buf::kScratch: base = static_cast<char*>(bufs_.scratch); break;
  }
  return base + s.offset * esize_;
}

transport::WireHeader Executor::Header(int step, size_t count) const {
  transport::WireHeader h;
  h.kind = ctx_->kind;
  h.seq = ctx_->seq;
  h.step = static_cast<uint32_t>(step);
  h.dtype_op = transport::PackDtypeOp(static_cast<uint32_t>(ctx_->dtype),
                                      static_cast<uint32_t>(ctx_->op), ctx_->root);
  h.bytes = count * esize_;
  return h;
}

Status Executor::Communicate(const sched::Round& round, size_t round_index) {
  sends_.clear();
  recvs_.clear();
  send_peers_.clear();
  recv_peers_.clear();
  active_.clear();
  for (const auto& step : round.steps) {
    if (step.kind == StepKind::kSend) {
      sends_.push_back({Header(send_steps_[step.peer]++, step.src.count), Ptr(step.src)});
      send_peers_.push_back(step.peer);
    } else if (step.kind == StepKind::kRecv) {
      recvs_.push_back({Header(recv_steps_[step.peer]++, step.dst.count), Ptr(step.dst)});
      recv_peers_.push_back(step.peer);
    }
  }
  if (sends_.empty() && recvs_.empty()) return Status::Ok();
  // Post receives first, then sends, once the vectors stop growing (links keep pointers
  // to the ops).
  auto track = [&](transport::Link* link) {
    if (std::find(active_.begin(), active_.end(), link) == active_.end())
      active_.push_back(link);
  };
  for (size_t i = 0; i < recvs_.size(); ++i) {
    transport::Link* link = mesh_->link(recv_peers_[i]);
    link->PostRecv(&recvs_[i]);
    track(link);
  }
  for (size_t i = 0; i < sends_.size(); ++i) {
    transport::Link* link = mesh_->link(send_peers_[i]);
    link->PostSend(&sends_[i]);
    track(link);
  }
  return WaitAll(round_index);
}

bool Executor::AllDone() const {
  for (const auto& s : sends_)
    if (!s.done) return false;
  for (const auto& r : recvs_)
    if (!r.done) return false;
  return true;
}

Status Executor::WaitAll(size_t round_index) {
  backoff_.Reset();
  Status s = PollUntilDone(round_index);
  backoff_.Reset();  // no link stays armed to be woken (Link::ArmWake) after the round
  return s;
}

Status Executor::PollUntilDone(size_t round_index) {
  if (ctx_->progress != nullptr) {  // two relaxed stores per round; refined while idle
    ctx_->progress->round.store(static_cast<int32_t>(round_index), std::memory_order_relaxed);
    ctx_->progress->waiting_for.store(FirstPendingPeer(), std::memory_order_relaxed);
  }
  while (true) {
    bool moved = false;
    for (auto* link : active_) {
      if (!link->Busy()) continue;
      auto r = link->Progress();
      if (!r.ok()) {
        return r.status().WithContext(fmt::format("rank {}: {} seq {} round {} ({} link to rank {})",
                                                  mesh_->rank(), ctx_->what, ctx_->seq,
                                                  round_index, link->Name(), link->peer()));
      }
      moved |= r.value();
    }
    if (AllDone()) return Status::Ok();
    if (ctx_->abort != nullptr && ctx_->abort->load(std::memory_order_relaxed))
      return AbortedError(round_index);
    if (moved) {
      backoff_.Reset();
      continue;
    }
    if (backoff_.TimeToCheck()) {
      if (ctx_->progress != nullptr) {
        ctx_->progress->round.store(static_cast<int32_t>(round_index), std::memory_order_relaxed);
        ctx_->progress->waiting_for.store(FirstPendingPeer(), std::memory_order_relaxed);
      }
      if (ctx_->deadline.expired()) return TimeoutError(round_index);
    }
    backoff_.Idle(active_, ctx_->deadline);
  }
}

int Executor::FirstPendingPeer() const {
  for (size_t i = 0; i < recvs_.size(); ++i)
    if (!recvs_[i].done) return recv_peers_[i];
  for (size_t i = 0; i < sends_.size(); ++i)
    if (!sends_[i].done) return send_peers_[i];
  return -1;
}

Status Executor::AbortedError(size_t round_index) const {
  return Aborted(fmt::format("rank {}: {} seq {} aborted by weftCommAbort in round {}",
                             mesh_->rank(), ctx_->what, ctx_->seq, round_index));
}

Status Executor::TimeoutError(size_t round_index) const {
  std::string waiting;
  for (size_t i = 0; i < recvs_.size(); ++i)
    if (!recvs_[i].done)
      waiting += fmt::format("{}receive of {} bytes from rank {}", waiting.empty() ? "" : ", ",
                             recvs_[i].expect.bytes, recv_peers_[i]);
  for (size_t i = 0; i < sends_.size(); ++i)
    if (!sends_[i].done)
      waiting += fmt::format("{}send of {} bytes to rank {}", waiting.empty() ? "" : ", ",
                             sends_[i].header.bytes, send_peers_[i]);
  return DeadlineExceeded(fmt::format("rank {}: {} seq {} timed out (WEFT_TIMEOUT) in round {} "
                                      "waiting for {}",
                                      mesh_->rank(), ctx_->what, ctx_->seq, round_index, waiting));
}

}  // namespace weft::exec
