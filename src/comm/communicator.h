// A communicator: this rank's view of a group of ranks, the links to its peers, and the
// machinery that turns calls into executed schedules.
//
// Calls start in issue order. A blocking call with nothing queued runs on the caller's
// thread, without the submission lock, and a collective repeated with the same
// arguments reuses its plan (comm/prepared_call.h). Non-blocking calls (and blocking
// calls behind them) run on a worker thread started on first use. Non-blocking sends and
// receives do not hold the worker: they progress together (so rings of them cannot
// deadlock); a collective queued behind them starts when they have completed.
//
// After a transport error, a timeout or a mismatch the communicator is failed: the links
// may hold half a message, so every later call returns Aborted with the original cause.
// (A mismatch that WEFT_CHECK_CALLS finds before any data moved is refused on every rank
// alike and leaves the communicator usable.) Failing sends each peer the cause
// (Link::SendAbort) and shuts the links, so every rank's error names the original
// failure.
//
// Thread-safety: one user thread at a time (as NCCL), except Abort(), which any thread may
// call while others are inside Run, Submit or a request's Wait; the worker is internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "comm/call.h"
#include "comm/call_check.h"
#include "comm/device_path.h"
#include "comm/flight_recorder.h"
#include "comm/prepared_call.h"
#include "comm/request.h"
#include "bootstrap/store.h"
#include "core/status.h"
#include "exec/executor.h"
#include "exec/p2p_engine.h"
#include "sched/planner.h"
#include "transport/mesh.h"

namespace weft::comm {

class Communicator {
 public:
  // Whatever must outlive the communicator's use of the bootstrap (the store client,
  // and the store server on the rank that hosts it). Communicators split or shrunk from
  // this one share it, so that they too can shrink through the store.
  struct Bootstrap {
    std::shared_ptr<void> keepalive;
    // The store client kept open since init (owned by `keepalive`; nullptr when there is
    // none) and the lock that serialises its use: StoreClient is one thread at a time.
    bootstrap::StoreClient* store = nullptr;
    std::shared_ptr<std::mutex> store_mu;
    net::AuthKey key;  // authenticates the tcp data connections (and those of splits)
  };

  // Collective: connects the mesh through `allgather`, then runs a barrier so that when
  // it returns every rank has finished the rendezvous.
  static Result<std::unique_ptr<Communicator>> Create(int rank, int size, uint64_t comm_id,
                                                      const transport::AllGatherFn& allgather,
                                                      Bootstrap bootstrap);
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  uint64_t id() const { return id_; }
  // The algorithm of the user's collective this rank last started ("" before the
  // first): a registry name, static, readable from any thread. For tools and benchmarks.
  const char* last_algorithm() const { return last_algorithm_.load(std::memory_order_relaxed); }

  Status Run(const Call& call);
  Result<std::shared_ptr<Request>> Submit(const Call& call);
  // NCCL semantics on a CUDA stream (docs/GPU.md): returns once the call is enqueued;
  // work queued on `stream` afterwards waits for it. Buffers may be device memory.
  // Host buffers with a null stream simply run as Run does.
  Status RunOnStream(const Call& call, void* stream);
  // The first fatal error (ok while the communicator is healthy).
  Status AsyncError();
  // Collective over this communicator; nullptr (and ok) for color < 0.
  Result<std::unique_ptr<Communicator>> Split(int color, int key);
  const Bootstrap& bootstrap() const { return bootstrap_; }
  // 0, 1, 2, ...: the index of this rank's next weftCommShrink on this communicator (every
  // survivor counts its own calls, so the k-th calls meet in the same store keys).
  uint64_t NextShrinkEpoch();

  // Abandons everything: the call running now (on any thread) and every queued or pending
  // call complete with Aborted within one poll interval (<= 100 ms); peers are sent the
  // cause and the links are shut down and closed; the worker is joined. Returns promptly
  // whatever the peers' state (never waits on a peer). Afterwards every call returns
  // Aborted; only LastError, SetLastError and the destructor remain useful. Idempotent.
  void Abort();

  // The last error message on this communicator ("" if none).
  std::string LastError();
  void SetLastError(const Status& status);

 private:
  Communicator(int rank, int size, uint64_t id, sched::Planner planner, double timeout_s);

  struct Task {
    Call call;
    uint64_t seq;
    std::shared_ptr<Request> request;
    bool device = false;  // ordered on a CUDA stream through device_->gate()
    gpu::StreamGate::Ticket ticket;
  };

  // The submitting thread's only (the worker never reads the counters): under mu_ where
  // the call is queued, under exec_mu_ alone on Run's lock-free path.
  uint64_t NextSeq(const Call& call);
  Status ExecuteOrFail(const Call& call, uint64_t seq);  // requires exec_mu_
  // WEFT_CHECK_CALLS (comm/call_check.h): Ok, or InvalidUsage naming the field and ranks
  // that differ (the communicator stays usable), or the exchange's own failure (fatal).
  // Inline: most calls are not checked, and they pay only the test.
  Status CheckCall(const Call& call, uint64_t seq) {  // requires exec_mu_
    return ShouldCheck(check_calls_, call) ? ExchangeCallCheck(call, seq) : Status::Ok();
  }
  Status ExchangeCallCheck(const Call& call, uint64_t seq);  // requires exec_mu_
  void Fail(const Status& cause);                        // requires exec_mu_
  // kind: the wire kind of the messages (0: the call's own).
  Status Execute(const Call& call, uint64_t seq, uint16_t kind = 0);  // requires exec_mu_
  bool HasDeviceBuffer(const Call& call) const;
  // Queues a call for the worker behind a gate on `stream` (device buffers or a stream).
  Result<std::shared_ptr<Request>> EnqueueOnStream(const Call& call, void* stream);
  Status EnsureDevicePath(int device);     // requires mu_
  Status ExecuteDeviceTask(Task& task);    // requires exec_mu_
  void StartDevicePointToPoint(Task task);  // requires exec_mu_
  Status AbortCause() const;
  Status AbortedCall(const Call& call) const;
  // Aborted: `call` is refused because the communicator failed earlier with `cause`.
  Status RefusedAfterFailure(const Call& call, const Status& cause) const;
  // `what`: CallName(call), which the caller has at hand.
  Status ExecuteSchedule(const Call& call, const char* what, uint64_t seq, uint16_t kind,
                         exec::Progress* progress);  // requires exec_mu_
  // The planner's choice for `spec` (cached); at WEFT_DEBUG=INFO rank 0 logs the first
  // choice of each collective and size class with the reason behind it.
  Result<const sched::Algorithm*> ChooseAlgorithm(const sched::CollectiveSpec& spec, size_t esize);
  // The schedule for `spec` (its topology is left null: the communicator's own is used)
  // and the name of its algorithm, from the caches below, else built.
  Result<const sched::Schedule*> LookUpSchedule(const sched::CollectiveSpec& spec, size_t esize,
                                                const char** algo_name);
  void WorkerLoop();
  void StartPointToPoint(Task task);  // requires exec_mu_
  void ProgressPointToPoint();        // requires exec_mu_
  Result<std::vector<std::string>> AllGatherStrings(const std::string& mine);

  const int rank_;
  const int size_;
  const uint64_t id_;
  const sched::Planner planner_;
  const double timeout_s_;
  std::unique_ptr<transport::Mesh> mesh_;  // null after Abort()
  Bootstrap bootstrap_;
  std::atomic<bool> aborting_{false};  // set by Abort(); read by running calls
  CheckCalls check_calls_ = CheckCalls::kRooted;  // WEFT_CHECK_CALLS

  // queue_.empty() && !worker_busy_, published for the submitting thread's lock-free
  // test: only that thread adds work, so once it reads true nothing is queued or running
  // on the worker until it queues something itself. Written under mu_.
  std::atomic<bool> idle_{true};
  std::mutex mu_;  // guards the fields below up to exec_mu_
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool worker_busy_ = false;
  bool stop_ = false;
  std::thread worker_;
  uint64_t coll_seq_ = 0;  // these three: see NextSeq
  std::vector<uint64_t> send_seq_, recv_seq_;
  std::unique_ptr<FlightRecorder> recorder_;  // thread-safe
  uint64_t split_count_ = 0;
  uint64_t shrink_count_ = 0;

  std::mutex exec_mu_;  // held while a call executes; guards the fields below
  Status failure_;      // first fatal error, or ok
  std::unique_ptr<exec::Executor> executor_;
  std::unique_ptr<exec::P2PEngine> p2p_;  // non-blocking sends/receives in flight
  Temporaries temps_;
  // The last collective planned (comm/prepared_call.h), one slot for the user's calls
  // and one for the library's own: the same call again skips validation (the user's
  // slot holds validated calls only), the planner and the buffer set-up.
  struct PlanSlot {
    PreparedCall plan;
    bool valid = false;
    // Whether the plan runs `call` as is; `wire_kind` tells the library's calls apart.
    bool Holds(const Call& call, uint16_t wire_kind) const {
      return valid && plan.ctx.kind == wire_kind && SameCollective(call, plan.call);
    }
  };
  PlanSlot user_plan_, own_plan_;
  // A plan slot's schedule also serves a call of the same shape on other buffers, so a
  // loop repeating one shape skips both map lookups below. Both slots are cleared
  // whenever the schedules are.
  std::map<std::tuple<int, int, size_t, const void*>, std::unique_ptr<sched::Schedule>> schedules_;
  // The planner's choice per (collective, root, bytes), and the (collective, size class)
  // pairs already explained at WEFT_DEBUG=INFO.
  std::map<std::tuple<int, int, size_t>, const sched::Algorithm*> choices_;
  std::set<std::pair<int, int>> explained_;
  // The algorithm of the user's last collective, for readers on any thread; stored only
  // when it changes.
  std::atomic<const char*> last_algorithm_{""};
  // Which host each rank is on (from the mesh), given to the planner with every spec.
  std::shared_ptr<const sched::Topology> topology_;
  // Created (under mu_) at the first call on device buffers or a stream; used by the
  // worker under exec_mu_.
  std::unique_ptr<DevicePath> device_;

  std::mutex error_mu_;
  std::string last_error_;
  Status async_error_;  // a copy of failure_ readable without exec_mu_
};

}  // namespace weft::comm
