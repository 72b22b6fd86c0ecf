// The order in which a communicator's calls run, and the worker thread that runs the
// queued ones.
//
// Calls start in issue order, one at a time (under the execution lock the communicator
// lends the queue). A blocking call with nothing queued runs on the caller's thread
// (RunInTurn); non-blocking calls, and blocking calls behind them, are queued for the
// worker, started on first use. Non-blocking sends and receives do not hold the worker:
// they progress together (so rings of them cannot deadlock), and a collective queued
// behind them starts when they have completed.
//
// One submitting thread at a time (as NCCL); Stop may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "comm/call.h"
#include "comm/request.h"
#include "core/deadline.h"
#include "core/mutex.h"
#include "core/status.h"
#include "gpu/stream_gate.h"

namespace weft::comm {

struct StagedCall;  // comm/stream_staging.h

struct Task {
  Call call;
  uint64_t seq = 0;
  std::shared_ptr<Request> request;
  bool device = false;  // ordered on a CUDA stream: through `ticket`, or `staged`
  gpu::StreamGate::Ticket ticket;
  std::shared_ptr<StagedCall> staged;  // enqueued on the stream at call time
};

class CallQueue {
 public:
  // What the worker runs; each is called with the execution lock held.
  class Runner {
   public:
    virtual ~Runner() = default;
    // Whether sends and receives are in flight. Called without the execution lock: only
    // the worker touches them while it is busy.
    virtual bool PointToPointInFlight() = 0;
    virtual void ProgressPointToPoint() = 0;
    // Runs `task` (or, for a send or receive, starts it) and completes its request.
    virtual void RunTask(Task task) = 0;
  };

  // `exec_mu`: the execution lock, held while any call runs. `timeout_s`: the
  // communicator's timeout at creation (RaiseTimeout raises the bound later).
  CallQueue(int rank, int size, double timeout_s, Mutex* exec_mu, Runner* runner);
  ~CallQueue();  // Shutdown()

  // queue empty and worker not busy, as the submitting thread's lock-free test: only
  // that thread adds work, so once it reads true nothing is queued or running on the
  // worker until it queues something itself.
  // Acquire: pairs with the release in WorkerLoop (the worker's last call is done).
  bool idle() const { return idle_.load(std::memory_order_acquire); }

  // The call's sequence number: per collective, or per (direction, peer) for sends and
  // receives. The submitting thread's only; Push and RunInTurn take theirs themselves.
  uint64_t NextSeq(const Call& call);

  // Runs `here(seq)` on this thread when nothing is queued or running, holding the
  // execution lock (taken before the queue's lock is released, so that anything
  // submitted meanwhile runs after it); otherwise queues the call for the worker and
  // waits for it. Aborted once stopped.
  Status RunInTurn(const Call& call, const std::function<Status(uint64_t seq)>& here)
      EXCLUDES(mu_);
  // Queues `call` for the worker. `prepare`, when given, runs under the queue's lock
  // before the task is queued (so that what it does is in queue order) and may refuse.
  Result<std::shared_ptr<Request>> Push(const Call& call,
                                        const std::function<Status(Task&)>& prepare = nullptr)
      EXCLUDES(mu_);
  // Runs `fn` under the queue's lock (calls queued before it are ahead of it).
  void WithLock(const std::function<void()>& fn) EXCLUDES(mu_);

  // Refuses new calls and returns those still queued, for the caller to complete. The
  // worker finishes its current call and exits.
  std::deque<Task> Stop() EXCLUDES(mu_);
  // Joins the worker (unless called on it).
  void Join();
  // Stops taking calls, lets the worker finish those queued, and joins it.
  void Shutdown() EXCLUDES(mu_);

  // The bound for a caller waiting on the worker with `ahead` calls in front of its own:
  // each is bounded by its timeout once it starts, none longer than the largest ever
  // set, so this is generous but finite.
  Deadline WaitDeadline(size_t ahead) const {
    const double most = max_timeout_s_.load(std::memory_order_relaxed);
    return Deadline::AfterSeconds(most * (1.0 + static_cast<double>(ahead)) + 60);
  }
  // A call may now be issued with a timeout of `seconds` (weftCommSetTimeout): the
  // bound above keeps the largest. Any thread.
  void RaiseTimeout(double seconds) {
    double most = max_timeout_s_.load(std::memory_order_relaxed);
    while (seconds > most &&
           !max_timeout_s_.compare_exchange_weak(most, seconds, std::memory_order_relaxed)) {
    }
  }

 private:
  // Queues `task`, starting the worker on first use.
  void Enqueue(Task task) REQUIRES(mu_);
  void WorkerLoop() EXCLUDES(mu_);

  const int rank_;
  std::atomic<double> max_timeout_s_;  // the largest timeout a call may have
  Mutex* const exec_mu_;
  Runner* const runner_;

  // The submitting thread's only (the worker never reads them).
  uint64_t coll_seq_ = 0;
  std::vector<uint64_t> send_seq_;  // receives are numbered as they start (P2PEngine)

  std::atomic<bool> idle_{true};  // written under mu_
  Mutex mu_;
  CondVar cv_;
  std::deque<Task> queue_ GUARDED_BY(mu_);
  bool worker_busy_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread worker_;  // started under mu_; joined by Join
};

}  // namespace weft::comm
