#include "comm/call_queue.h"

#include "comm/failure.h"

namespace weft::comm {

CallQueue::CallQueue(int rank, int size, double timeout_s, Mutex* exec_mu, Runner* runner)
    : rank_(rank),
      max_timeout_s_(timeout_s),
      exec_mu_(exec_mu),
      runner_(runner),
      send_seq_(size, 0) {}

CallQueue::~CallQueue() { Shutdown(); }

uint64_t CallQueue::NextSeq(const Call& call) {
  switch (call.kind) {
    case CallKind::kCollective: return coll_seq_++;
    case CallKind::kSend: return send_seq_[call.peer]++;
    case CallKind::kRecv: return 0;  // numbered as they start (exec/p2p_engine.h)
  }
  return 0;
}

Status CallQueue::RunInTurn(const Call& call, const std::function<Status(uint64_t)>& here) {
  MutexLock lock(&mu_);
  if (stop_) return AbortedCall(rank_, call);
  const uint64_t seq = NextSeq(call);
  if (queue_.empty() && !worker_busy_) {
    MutexLock exec_lock(exec_mu_);
    lock.Unlock();
    return here(seq);
  }
  auto request = std::make_shared<Request>();
  Enqueue({call, seq, request, false, {}, nullptr});
  Deadline deadline = WaitDeadline(queue_.size());
  lock.Unlock();
  return request->Wait(deadline);
}

Result<std::shared_ptr<Request>> CallQueue::Push(const Call& call,
                                                 const std::function<Status(Task&)>& prepare) {
  MutexLock lock(&mu_);
  if (stop_) return AbortedCall(rank_, call);
  Task task{call, 0, std::make_shared<Request>(), false, {}, nullptr};
  if (prepare) WEFT_RETURN_IF_ERROR(prepare(task));
  task.seq = NextSeq(call);
  std::shared_ptr<Request> request = task.request;
  Enqueue(std::move(task));
  return request;
}

void CallQueue::WithLock(const std::function<void()>& fn) {
  MutexLock lock(&mu_);
  fn();
}

void CallQueue::Enqueue(Task task) {
  queue_.push_back(std::move(task));
  // Relaxed: publishes nothing; read by this (the submitting) thread only, and ordered
  // with the worker's store of true by mu_.
  idle_.store(false, std::memory_order_relaxed);
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  cv_.NotifyAll();
}

std::deque<Task> CallQueue::Stop() {
  std::deque<Task> dropped;
  MutexLock lock(&mu_);
  stop_ = true;
  dropped.swap(queue_);
  cv_.NotifyAll();
  return dropped;
}

void CallQueue::Join() {
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

void CallQueue::Shutdown() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  Join();
}

void CallQueue::WorkerLoop() {
  MutexLock lock(&mu_);
  while (true) {
    const bool p2p_idle = !runner_->PointToPointInFlight();
    if (queue_.empty() && p2p_idle) {
      worker_busy_ = false;
      // Release: the submitting thread that reads it sees this worker's last call done.
      idle_.store(true, std::memory_order_release);
      if (stop_) return;
      while (!stop_ && queue_.empty()) cv_.Wait(&mu_);
      continue;
    }
    worker_busy_ = true;
    const bool next_is_p2p = !queue_.empty() && queue_.front().call.kind != CallKind::kCollective;
    if (queue_.empty() || (!next_is_p2p && !p2p_idle)) {
      // Sends and receives in flight, and nothing that may start before they finish.
      lock.Unlock();
      {
        MutexLock exec_lock(exec_mu_);
        runner_->ProgressPointToPoint();
      }
      lock.Lock();
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    {
      MutexLock exec_lock(exec_mu_);
      runner_->RunTask(std::move(task));
    }
    lock.Lock();
  }
}

}  // namespace weft::comm
