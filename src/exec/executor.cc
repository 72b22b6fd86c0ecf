#include "exec/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "exec/reduce.h"
#include "exec/scratch_liveness.h"
#include "exec/streaming_store.h"

namespace weft::exec {

using sched::Buf;
using sched::Slice;
using sched::Step;
using sched::StepKind;

namespace {

// The index of the round's first local step (steps.size() if none): the builder puts a
// round's sends and receives before its local steps.
size_t FirstLocalStep(const sched::Round& round) {
  const auto& steps = round.steps;
  size_t first = 0;
  while (first < steps.size() &&
         (steps[first].kind == StepKind::kSend || steps[first].kind == StepKind::kRecv ||
          steps[first].kind == StepKind::kSync))
    ++first;
  return first;
}

}  // namespace

Executor::Executor(transport::Mesh* mesh)
    : mesh_(mesh),
      send_steps_(mesh->size(), 0),
      recv_steps_(mesh->size(), 0),
      backoff_(Oversubscribed(*mesh)) {}

Status Executor::Run(const sched::Schedule& schedule, const ExecContext& ctx, const Buffers& bufs) {
  schedule_ = &schedule;
  ctx_ = &ctx;
  base_[static_cast<int>(Buf::kInput)] = static_cast<char*>(const_cast<void*>(bufs.input));
  base_[static_cast<int>(Buf::kOutput)] = static_cast<char*>(bufs.output);
  base_[static_cast<int>(Buf::kScratch)] = static_cast<char*>(bufs.scratch);
  peers_ = bufs.peers;
  esize_ = DataTypeSize(ctx.dtype);
  // Only the peers the last call talked to have counts to clear: a small call on a large
  // world touches one or two.
  for (int peer : step_peers_) send_steps_[peer] = recv_steps_[peer] = 0;
  step_peers_.clear();
  if (reduce_ == nullptr || ctx.dtype != reduce_dtype_ || ctx.op != reduce_op_) {
    reduce_ = GetReduceFn(ctx.dtype, ctx.op);
    reduce_into_ = GetReduceIntoFn(ctx.dtype, ctx.op);
    reduce_dtype_ = ctx.dtype;
    reduce_op_ = ctx.op;
  }
  size_t first_round = 0;
  if (ctx.entered_together && !schedule.rounds.empty()) {
    const auto& steps = schedule.rounds[0].steps;
    if (!steps.empty() && std::all_of(steps.begin(), steps.end(), [](const Step& s) {
          return s.kind == StepKind::kSync;
        }))
      first_round = 1;
  }
  for (size_t r = first_round; r < schedule.rounds.size(); ++r) {
    const auto& round = schedule.rounds[r];
    WEFT_RETURN_IF_ERROR(Communicate(round, r));
    const auto& steps = round.steps;
    size_t i = 0;
    if (eager_.active) {  // reduced while its receive landed; finish the rest
      while (AdvanceEagerReduce()) {
      }
      i = eager_.first_step + (eager_.fused ? 2 : 1);
      eager_.active = false;
    } else if (early_.active) {  // copied while the round communicated; finish the rest
      std::memcpy(early_.dst + early_.done, early_.src + early_.done, early_.bytes - early_.done);
      i = early_.step + 1;
      early_.active = false;
    }
    // Only registered schedules are blocked: a plain call's rounds skip the look.
    if (i == 0 && peers_ != nullptr && RunBlocked(steps, FirstLocalStep(round))) continue;
    for (; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kReduce) {
        reduce_(Ptr(step.dst), Ptr(step.src), step.dst.count);
      } else if (sched::TouchesPeer(step.kind)) {
        WEFT_RETURN_IF_ERROR(RunPeerStep(step));
      } else if (step.kind == StepKind::kCopy) {
        void* dst = Ptr(step.dst);
        const void* src = Ptr(step.src);
        if (i + 1 < steps.size() && FusesWithNext(step, steps[i + 1])) {
          const Step& next = steps[i + 1];
          const void* y = next.kind == StepKind::kPeerReduce ? PeerPtr(next.peer, next.src)
                                                             : Ptr(next.src);
          FusedReduce(dst, src, y, step.dst.count, step.dst.count);
          ++i;
        } else if (dst != src) {
          std::memmove(dst, src, step.dst.count * esize_);
        }
      }
    }
  }
  return Status::Ok();
}

namespace {

bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace

// Out-of-place algorithms start a reduction with "copy x to dst; reduce y into dst"
// (sched/algorithms: ring, recursive doubling, binomial, ...). Run as dst = x (op) y,
// that is one pass over memory instead of two (the copy's write and the reduce's re-read
// of dst). The schedule stays as written: the interpreter and the simulator see the two
// steps. Allowed when the reduce's destination is exactly the copy's and the elementwise
// loop reads nothing it has already written: y does not overlap dst, and x is dst itself
// or does not overlap it (buffers can alias: an in-place call's input is its output).
//
// A reduce from a peer's buffer (kPeerReduce) fuses the same way; the peer's mapping is
// memory of its own, which overlaps none of this rank's buffers.
bool Executor::FusesWithNext(const Step& copy, const Step& next) const {
  if (next.kind == StepKind::kPeerReduce && peers_ != nullptr &&
      next.dst.buf == copy.dst.buf && next.dst.offset == copy.dst.offset &&
      next.dst.count == copy.dst.count) {
    const size_t bytes = copy.dst.count * esize_;
    const void* dst = Ptr(copy.dst);
    const void* x = Ptr(copy.src);
    return x == dst || !Overlaps(x, bytes, dst, bytes);
  }
  if (next.kind != StepKind::kReduce || next.dst.buf != copy.dst.buf ||
      next.dst.offset != copy.dst.offset || next.dst.count != copy.dst.count)
    return false;
  const size_t bytes = copy.dst.count * esize_;
  const void* dst = Ptr(copy.dst);
  const void* x = Ptr(copy.src);
  return !Overlaps(Ptr(next.src), bytes, dst, bytes) &&
         (x == dst || !Overlaps(x, bytes, dst, bytes));
}

namespace {

// Receives smaller than this are reduced after they complete: below it the bookkeeping
// would cost more than the overlap gains.
constexpr size_t kEagerMinBytes = 64 << 10;
// At most this much is reduced between two passes over the links, so sends and other
// receives of the round keep moving while a large receive is reduced.
constexpr size_t kEagerSliceBytes = 256 << 10;
// A fused copy+reduce whose output is at least this large writes it with streaming
// stores (exec/streaming_store.h): it no longer fits in cache, and a normal store would
// read every output line before writing it. At 1 MiB both ways cost the same here.
constexpr size_t kStreamingMinBytes = 4 << 20;

}  // namespace

// Reduce as it lands. A round of a reducing schedule typically receives a peer's partial
// result into scratch and then, as its first local step, reduces it into the output
// ("copy x to dst; reduce y into dst", or "reduce y into dst"). Run after the whole
// receive, that reduction re-reads megabytes from memory; run on each piece as it lands
// (RecvOp::landed), it reads the piece while it is still in cache, and it overlaps the
// rest of the transfer. Allowed only when running the step early cannot change what the
// round computes: y is exactly one receive's buffer, nothing else the round receives
// writes dst or x, and nothing it sends reads dst. The schedule itself is unchanged.
void Executor::PlanEagerReduce(const sched::Round& round, size_t round_index) {
  eager_.active = false;
  const auto& steps = round.steps;
  const size_t first = FirstLocalStep(round);
  if (first == steps.size()) return;
  const Step& step = steps[first];
  // Small rounds first: they are the common case, and the tests below cost more.
  if (step.dst.count * esize_ < kEagerMinBytes) return;
  EagerReduce e;
  e.first_step = first;
  if (step.kind == StepKind::kCopy) {
    if (first + 1 >= steps.size() || !FusesWithNext(step, steps[first + 1])) return;
    e.fused = true;
    e.x = Ptr(step.src);
    e.y = Ptr(steps[first + 1].src);
  } else if (step.kind == StepKind::kReduce) {
    e.y = Ptr(step.src);
  } else {
    return;
  }
  e.dst = Ptr(step.dst);
  e.count = step.dst.count;
  const size_t bytes = e.count * esize_;
  size_t recv = recvs_.size();
  for (size_t j = 0; j < recvs_.size(); ++j) {
    if (recvs_[j].data == e.y && recvs_[j].expect.bytes == bytes) recv = j;
    if (Overlaps(e.dst, bytes, recvs_[j].data, recvs_[j].expect.bytes)) return;
    if (e.x != nullptr && Overlaps(e.x, bytes, recvs_[j].data, recvs_[j].expect.bytes)) return;
  }
  if (recv == recvs_.size()) return;
  for (const auto& send : sends_)
    if (Overlaps(e.dst, bytes, send.data, send.header.bytes)) return;
  e.recv = recv;
  e.active = true;
  // Where the link can hand the receive over where it lies (a shm ring), reduce it
  // there (ConsumeEager) and skip the copy into y, provided y is scratch nothing reads
  // afterwards: y then never holds the bytes.
  const Slice& y = e.fused ? steps[first + 1].src : step.src;
  transport::RecvOp& op = recvs_[recv];
  if (y.buf == Buf::kScratch &&
      mesh_->link(recv_peers_[recv])->CanConsumeInPlace(op.expect.bytes) &&
      !ScratchReadLater(*schedule_, round_index, first + (e.fused ? 2 : 1), y)) {
    op.consume = &Executor::ConsumeEager;
    op.consume_ctx = this;
    op.consume_align = static_cast<uint32_t>(esize_);
  } else {
    op.incremental = true;
  }
  eager_ = e;
}

void Executor::ReduceEagerPiece(size_t offset, const void* y, size_t n) {
  auto* dst = static_cast<char*>(eager_.dst) + offset;
  if (eager_.fused) {
    FusedReduce(dst, static_cast<const char*>(eager_.x) + offset, y, n, eager_.count);
  } else {
    reduce_(dst, y, n);
  }
  eager_.done += n;
}

void Executor::ConsumeEager(void* self, uint64_t offset, const void* piece, uint64_t bytes) {
  auto* ex = static_cast<Executor*>(self);
  ex->ReduceEagerPiece(offset, piece, bytes / ex->esize_);
}

// Reduces what has landed of the eager receive and is not yet reduced, at most
// kEagerSliceBytes of it. Returns whether it reduced anything.
bool Executor::AdvanceEagerReduce() {
  const transport::RecvOp& r = recvs_[eager_.recv];
  if (r.consume != nullptr) return false;  // ConsumeEager reduces each piece as handed over
  const size_t landed = (r.done ? r.expect.bytes : r.landed) / esize_;
  if (landed <= eager_.done) return false;
  const size_t n = std::min(landed - eager_.done, std::max<size_t>(1, kEagerSliceBytes / esize_));
  const size_t off = eager_.done * esize_;
  ReduceEagerPiece(off, static_cast<const char*>(eager_.y) + off, n);
  return true;
}

// Copy early. A rooted collective's root typically copies its own block to its output
// while a peer pulls another block out of its memory (shm single-copy): run after the
// round, the copy adds its whole time to the root's; run in slices between passes over
// the links while the round's messages are in flight, it fills time the root spends
// waiting. Allowed only when running the copy early cannot change what the round
// computes: nothing the round receives writes its source or destination, nothing it
// sends reads its destination, and source and destination do not overlap (the copy is
// cut into slices). Only the round's first local step is considered, so no earlier local
// step can depend on it; a copy that fuses with the reduce after it is left to
// PlanEagerReduce.
void Executor::PlanEarlyCopy(const sched::Round& round) {
  early_.active = false;
  if (eager_.active) return;
  const auto& steps = round.steps;
  const size_t first = FirstLocalStep(round);
  if (first == steps.size() || steps[first].kind != StepKind::kCopy) return;
  const Step& step = steps[first];
  const size_t bytes = step.dst.count * esize_;
  if (bytes < kEagerMinBytes) return;
  if (first + 1 < steps.size() && FusesWithNext(step, steps[first + 1])) return;
  char* dst = static_cast<char*>(Ptr(step.dst));
  const char* src = static_cast<const char*>(Ptr(step.src));
  if (Overlaps(dst, bytes, src, bytes)) return;
  for (const auto& recv : recvs_) {
    if (Overlaps(dst, bytes, recv.data, recv.expect.bytes)) return;
    if (Overlaps(src, bytes, recv.data, recv.expect.bytes)) return;
  }
  for (const auto& send : sends_)
    if (Overlaps(dst, bytes, send.data, send.header.bytes)) return;
  early_ = EarlyCopy{true, first, dst, src, bytes, 0};
}

// Copies the next slice of the early copy, at most kEagerSliceBytes. Returns whether it
// copied anything.
bool Executor::AdvanceEarlyCopy() {
  if (early_.done == early_.bytes) return false;
  const size_t n = std::min(early_.bytes - early_.done, kEagerSliceBytes);
  std::memcpy(early_.dst + early_.done, early_.src + early_.done, n);
  early_.done += n;
  return true;
}

void Executor::FusedReduce(void* dst, const void* x, const void* y, size_t count,
                           size_t step_count) {
  if (step_count * esize_ >= kStreamingMinBytes) {
    ReduceIntoStreaming(reduce_into_, esize_, dst, x, y, count);
  } else {
    reduce_into_(dst, x, y, count);
  }
}

transport::WireHeader Executor::Header(int step, size_t count) const {
  transport::WireHeader h;
  h.kind = ctx_->kind;
  h.seq = ctx_->seq;
  // A point-to-point call is one message (step 0), whose step field carries its tag.
  h.step = ctx_->kind == transport::kPointToPoint ? ctx_->tag : static_cast<uint32_t>(step);
  h.dtype_op = transport::PackDtypeOp(static_cast<uint32_t>(ctx_->dtype),
                                      static_cast<uint32_t>(ctx_->op), ctx_->root);
  h.bytes = count * esize_;
  return h;
}

Status Executor::Communicate(const sched::Round& round, size_t round_index) {
  eager_.active = false;
  early_.active = false;
  sends_.clear();
  recvs_.clear();
  send_peers_.clear();
  recv_peers_.clear();
  active_.clear();
  flag_waits_.clear();
  for (const auto& step : round.steps) {
    if (step.kind == StepKind::kSync) {
      transport::Link* link = mesh_->link(step.peer);
      if (!link->HasFlags()) {
        return Internal(fmt::format("rank {}: {} seq {} round {}: a sync with rank {}, whose {} "
                                    "link has no flags (registered buffers need shm)",
                                    mesh_->rank(), ctx_->what, ctx_->seq, round_index,
                                    step.peer, link->Name()));
      }
      // Raised at once: it says this rank has reached the round, which it has.
      link->RaiseFlag();
      flag_waits_.push_back(link);
      continue;
    }
    if (step.kind != StepKind::kSend && step.kind != StepKind::kRecv) continue;
    if (send_steps_[step.peer] == 0 && recv_steps_[step.peer] == 0)
      step_peers_.push_back(step.peer);  // its first message in this call
    if (step.kind == StepKind::kSend) {
      sends_.push_back({Header(send_steps_[step.peer]++, step.src.count), Ptr(step.src)});
      send_peers_.push_back(step.peer);
    } else {
      recvs_.push_back({Header(recv_steps_[step.peer]++, step.dst.count), Ptr(step.dst)});
      recv_peers_.push_back(step.peer);
    }
  }
  if (sends_.empty() && recvs_.empty()) return WaitFlags(round_index);
  PlanEagerReduce(round, round_index);
  PlanEarlyCopy(round);
  // Post receives first, then sends, once the vectors stop growing (links keep pointers
  // to the ops).
  auto track = [&](transport::Link* link) {
    if (std::find(active_.begin(), active_.end(), link) == active_.end()) active_.push_back(link);
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
  WEFT_RETURN_IF_ERROR(WaitAll(round_index));
  return WaitFlags(round_index);
}

Status Executor::TakeFlags(const std::vector<int>& peers, const ExecContext& ctx) {
  ctx_ = &ctx;
  flag_waits_.clear();
  for (int p : peers) flag_waits_.push_back(mesh_->link(p));
  return WaitFlags(0);
}

Status Executor::WaitFlags(size_t round_index) {
  if (flag_waits_.empty()) return Status::Ok();
  backoff_.Reset();
  bool slept = false;
  while (true) {
    bool moved = false;
    for (size_t i = 0; i < flag_waits_.size();) {
      transport::Link* link = flag_waits_[i];
      auto r = link->TakeFlag();
      if (!r.ok()) {
        return r.status().WithContext(
            fmt::format("rank {}: {} seq {} round {} (waiting for the flag of rank {})",
                        mesh_->rank(), ctx_->what, ctx_->seq, round_index, link->peer()));
      }
      if (r.value()) {
        flag_waits_[i] = flag_waits_.back();
        flag_waits_.pop_back();
        moved = true;
      } else {
        ++i;
      }
    }
    if (flag_waits_.empty()) return Status::Ok();
    // Relaxed: a request to stop; no data rides on it.
    if (ctx_->abort != nullptr && ctx_->abort->load(std::memory_order_relaxed))
      return AbortedError(round_index);
    if (moved) {
      backoff_.Reset();
      continue;
    }
    // After a sleep too: a sleep lasts up to 10 ms, and 64 of them would be too long.
    if (slept || backoff_.TimeToCheck()) {
      if (ctx_->progress != nullptr) {
        ctx_->progress->round.store(static_cast<int32_t>(round_index), std::memory_order_relaxed);
        ctx_->progress->waiting_for.store(flag_waits_.front()->peer(), std::memory_order_relaxed);
      }
      if (ctx_->deadline.expired()) {
        std::string peers;
        for (const transport::Link* link : flag_waits_)
          peers += fmt::format("{}{}", peers.empty() ? "" : ", ", link->peer());
        return DeadlineExceeded(fmt::format(
            "rank {}: {} seq {} timed out ({:g} s: {}) in round {} waiting for the flag "
            "(registered buffers) of rank {}",
            mesh_->rank(), ctx_->what, ctx_->seq, ctx_->deadline.seconds(), kTimeoutSources,
            round_index, peers));
      }
    }
    slept = !backoff_.IdleBriefly();
    if (slept) SleepOnFlags();
  }
}

void Executor::SleepOnFlags() {
  flag_sleeps_.clear();
  std::vector<transport::Link*> armed;
  for (transport::Link* link : flag_waits_) {
    std::atomic<uint32_t>* word = link->ArmWake();
    if (word == nullptr) break;
    armed.push_back(link);
    // Acquire: pairs with the release of the bell in the peer's ShmLink::RingPeer.
    flag_sleeps_.push_back({word, word->load(std::memory_order_acquire)});
  }
  // Armed (sleeping announced, then a fence) before this last look at the flags: a peer
  // that raised its flag before the announcement is seen here, one after it rings.
  if (armed.size() != flag_waits_.size()) {  // some link has no wake word: sleep briefly
    for (transport::Link* link : armed) link->DisarmWake();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return;
  }
  bool raised = false;
  for (transport::Link* link : flag_waits_) raised = raised || link->PeerHasFlag();
  if (!raised) {
    const int64_t ms = std::min<int64_t>(ctx_->deadline.Get().RemainingMs(), 10);
    FutexWaitAny(flag_sleeps_, std::max<int64_t>(ms, 0) * 1000);
  }
  for (transport::Link* link : armed) link->DisarmWake();
}

Status Executor::RunPeerStep(const Step& step) {
  if (peers_ == nullptr) {
    return Internal(fmt::format("rank {}: {} seq {}: '{}' without the peers' buffers",
                                mesh_->rank(), ctx_->what, ctx_->seq, sched::ToString(step)));
  }
  const size_t bytes = step.dst.count * esize_;
  switch (step.kind) {
    case StepKind::kPeerReduce:
      reduce_(Ptr(step.dst), PeerPtr(step.peer, step.src), step.dst.count);
      break;
    case StepKind::kPeerRead:
      std::memcpy(Ptr(step.dst), PeerPtr(step.peer, step.src), bytes);
      break;
    case StepKind::kPeerWrite:
      std::memcpy(PeerPtr(step.peer, step.dst), Ptr(step.src), bytes);
      break;
    default:
      break;
  }
  return Status::Ok();
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
        return r.status().WithContext(
            fmt::format("rank {}: {} seq {} round {} ({} link to rank {})", mesh_->rank(),
                        ctx_->what, ctx_->seq, round_index, link->Name(), link->peer()));
      }
      moved |= r.value();
    }
    if (eager_.active && AdvanceEagerReduce()) moved = true;
    if (early_.active && AdvanceEarlyCopy()) moved = true;
    if (AllDone()) return Status::Ok();
    // Relaxed: a request to stop; no data rides on it.
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
    // Spin and yield without the clock; only a longer wait reads it (LazyDeadline).
    if (!backoff_.IdleBriefly()) backoff_.Sleep(active_, ctx_->deadline.Get());
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
  return DeadlineExceeded(
      fmt::format("rank {}: {} seq {} timed out ({:g} s: {}) in round {} waiting for {}",
                  mesh_->rank(), ctx_->what, ctx_->seq, ctx_->deadline.seconds(),
                  kTimeoutSources, round_index, waiting));
}

}  // namespace weft::exec
