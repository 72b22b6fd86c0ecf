// The executor: runs one rank's schedule over the links of a Mesh, round by round.
//
// For each round it posts every send and receive, then drives the links' Progress()
// until all complete (see Backoff for how it waits), and then runs the round's local
// reduce/copy steps. Every wait is bounded by the call's deadline; a timeout names the
// peers still being waited on.
//
// An Executor keeps its bookkeeping between calls, so a steady stream of collectives
// allocates nothing. Thread-safety: none; the communicator serialises calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/backoff.h"
#include "exec/progress.h"
#include "exec/reduce.h"
#include "sched/schedule.h"
#include "transport/mesh.h"

namespace weft::exec {

struct ExecContext {
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;  // kAvg is reduced as kSum
  int root = -1;           // rooted collectives; -1 otherwise (WireHeader root tag)
  uint16_t kind = 0;       // WireHeader::kind
  uint64_t seq = 0;        // WireHeader::seq
  // Point-to-point calls (one message): the caller's tag, sent in WireHeader::step.
  uint32_t tag = 0;
  // The call's timeout (WEFT_TIMEOUT, weftConfig_t, weftCommSetTimeout), from the first wait.
  LazyDeadline deadline = LazyDeadline::Never();
  const char* what = "";                          // "allreduce", for error messages
  // Set by another thread to abandon the call (weftCommAbort): every wait returns Aborted
  // within one poll interval (Backoff: at most 100 ms). May be null.
  const std::atomic<bool>* abort = nullptr;
  // Where the call is, for the flight recorder. May be null.
  Progress* progress = nullptr;
  // Every rank has raised a flag to every peer since entering the call and taken every
  // peer's (the registered path's agreement): a first round of kSync steps alone would
  // only repeat that, so Run skips it.
  bool entered_together = false;
};

// Every rank's input and output as mapped in this process, by rank (this rank's own
// entries unused): what the kPeer* steps of a registered schedule read and write.
struct PeerBuffers {
  std::vector<char*> input, output;
};

struct Buffers {
  const void* input = nullptr;
  void* output = nullptr;
  void* scratch = nullptr;
  const PeerBuffers* peers = nullptr;  // registered schedules only
};

class Executor {
 public:
  explicit Executor(transport::Mesh* mesh);

  // Runs `schedule`. On error the message names this rank, the call (what/seq), the
  // round and the peer involved; the links may be left mid-message (the caller marks
  // the communicator failed).
  Status Run(const sched::Schedule& schedule, const ExecContext& ctx, const Buffers& bufs);

  // Takes the next flag of each of `peers` without raising one (a rank that raised its
  // flags and went on without waiting for the peers', comm/registered_path.h), bounded
  // and checked like a round's kSync steps (its errors name round 0).
  Status TakeFlags(const std::vector<int>& peers, const ExecContext& ctx);

 private:
  Status Communicate(const sched::Round& round, size_t round_index);
  Status WaitAll(size_t round_index);
  // WaitAll without its bookkeeping: progresses the links until the round completes.
  Status PollUntilDone(size_t round_index);
  Status TimeoutError(size_t round_index) const;
  // The round's kSync steps: raises this rank's flag to each peer, then waits (bounded by
  // the deadline, the peer's liveness checked) until each peer's matching flag is taken.
  Status WaitFlags(size_t round_index);
  // Sleeps on the wake words of the links in flag_waits_ until a peer raises a flag (or
  // 10 ms pass): the flag is stored before the wake word is looked at (ShmLink::RaiseFlag).
  void SleepOnFlags();
  // A kPeerReduce, kPeerRead or kPeerWrite step.
  Status RunPeerStep(const sched::Step& step);
  // Runs the round's local steps from `first` piece by piece, each piece through every
  // step while it is in cache, where that computes the same (executor_blocked.cc); false,
  // having run nothing, where it would not or would not pay.
  bool RunBlocked(const std::vector<sched::Step>& steps, size_t first);
  // Runs steps[i] (and steps[i + 1] when a copy fuses with it) on elements
  // [off, off + n) of its slices; returns how many steps it ran.
  size_t RunLocalPiece(const std::vector<sched::Step>& steps, size_t i, size_t off, size_t n);
  char* PeerPtr(int peer, const sched::Slice& s) const {
    const auto& v = s.buf == sched::Buf::kInput ? peers_->input : peers_->output;
    return v[peer] + s.offset * esize_;
  }
  Status AbortedError(size_t round_index) const;
  void* Ptr(const sched::Slice& s) const {
    return base_[static_cast<int>(s.buf)] + s.offset * esize_;
  }
  bool FusesWithNext(const sched::Step& copy, const sched::Step& next) const;
  // dst = x (op) y over `count` elements of a step of `step_count`: with streaming
  // stores when the step's output is too large for the cache.
  void FusedReduce(void* dst, const void* x, const void* y, size_t count, size_t step_count);
  // Reduce as it lands: see PlanEagerReduce in executor.cc.
  void PlanEagerReduce(const sched::Round& round, size_t round_index);
  bool AdvanceEagerReduce();
  // Reduces `n` elements of the eager receive, from byte `offset`, whose bytes are at `y`.
  void ReduceEagerPiece(size_t offset, const void* y, size_t n);
  // RecvOp::consume for the eager reduce's receive: reduces a piece where the link holds it.
  static void ConsumeEager(void* self, uint64_t offset, const void* piece, uint64_t bytes);
  // Copy while the round communicates: see PlanEarlyCopy in executor.cc.
  void PlanEarlyCopy(const sched::Round& round);
  bool AdvanceEarlyCopy();
  transport::WireHeader Header(int step, size_t count) const;
  bool AllDone() const;
  int FirstPendingPeer() const;

  transport::Mesh* mesh_;
  // The call being run.
  const sched::Schedule* schedule_ = nullptr;
  const ExecContext* ctx_ = nullptr;
  static_assert(static_cast<int>(sched::Buf::kScratch) == 2, "base_ holds one per Buf");
  char* base_[3] = {};  // the call's buffers, indexed by sched::Buf
  const PeerBuffers* peers_ = nullptr;
  size_t esize_ = 1;
  ReduceFn reduce_ = nullptr;
  ReduceIntoFn reduce_into_ = nullptr;
  // The (dtype, op) the two functions above were looked up for: a run of like calls
  // looks them up once.
  DataType reduce_dtype_ = DataType::kFloat32;
  RedOp reduce_op_ = RedOp::kSum;
  // The round's first local step when it reduces a receive of the round that may be
  // reduced piece by piece while the rest arrives (PlanEagerReduce).
  struct EagerReduce {
    bool active = false;
    size_t recv = 0;        // index in recvs_ of the receive it reads (y)
    size_t first_step = 0;  // its step in the round; fused: this copy and the next reduce
    bool fused = false;     // dst = x (op) y; otherwise dst (op)= y
    void* dst = nullptr;
    const void* x = nullptr;
    const void* y = nullptr;
    size_t count = 0;  // elements
    size_t done = 0;   // elements reduced so far
  };
  EagerReduce eager_;
  // The round's first local step when it is a copy the round's communication neither
  // feeds nor reads, run in slices while that communication is in flight
  // (PlanEarlyCopy).
  struct EarlyCopy {
    bool active = false;
    size_t step = 0;  // its index in the round
    char* dst = nullptr;
    const char* src = nullptr;
    size_t bytes = 0;
    size_t done = 0;  // bytes copied so far
  };
  EarlyCopy early_;
  // Reused between calls.
  std::vector<int> send_steps_, recv_steps_;  // per-peer message index in this call
  std::vector<int> step_peers_;  // the peers whose counts above are not 0
  std::vector<transport::SendOp> sends_;
  std::vector<transport::RecvOp> recvs_;
  std::vector<int> send_peers_, recv_peers_;
  std::vector<transport::Link*> active_;
  std::vector<transport::Link*> flag_waits_;  // the round's kSync links not yet answered
  std::vector<FutexWait> flag_sleeps_;
  Backoff backoff_;
};

}  // namespace weft::exec
