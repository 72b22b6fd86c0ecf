// A communicator: this rank's view of a group of ranks, the links to its peers, and the
// machinery that turns calls into executed schedules. Its parts, each in its own file:
// - comm/comm_config.h: what it reads from the environment, once, at creation;
// - comm/call_queue.h: the order calls run in, and the worker that runs queued ones;
// - comm/plan_cache.h: the planner's choices and the schedules and plans built;
// - comm/failure.h: the failure it ends in, and the errors it reports;
// - comm/device_calls.h: calls on CUDA buffers and streams;
// - this file: creation, execution of one call, abort, split.
//
// A blocking call with nothing queued runs on the caller's thread, without the queue's
// lock, and a collective repeated with the same arguments reuses its plan.
//
// After a transport error, a timeout or a mismatch the communicator is failed: every
// later call returns Aborted with the original cause. (A mismatch that WEFT_CHECK_CALLS
// finds before any data moved is refused on every rank alike and leaves the communicator
// usable.) Failing sends each peer the cause (Link::SendAbort) and shuts the links, so
// every rank's error names the original failure.
//
// Thread-safety: one user thread at a time (as NCCL), except Abort(), which any thread may
// call while others are inside Run, Submit or a request's Wait; the worker is internal.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "comm/call.h"
#include "comm/call_check.h"
#include "comm/call_estimate.h"
#include "comm/call_queue.h"
#include "comm/comm_config.h"
#include "comm/device_calls.h"
#include "comm/failure.h"
#include "comm/flight_recorder.h"
#include "comm/plan_cache.h"
#include "comm/prepared_call.h"
#include "comm/registered_path.h"
#include "comm/registry.h"
#include "comm/request.h"
#include "core/mutex.h"
#include "core/status.h"
#include "exec/executor.h"
#include "exec/p2p_engine.h"
#include "transport/mesh.h"

namespace weft::comm {

class Communicator : private CallQueue::Runner {
 public:
  // Whatever must outlive the communicator's use of the bootstrap (the store client,
  // and the store server on the rank that hosts it). Communicators split or shrunk from
  // this one share it, so that they too can shrink through the store.
  struct Bootstrap {
    std::shared_ptr<void> keepalive;
    // The store client kept open since init (owned by `keepalive`; nullptr when there is
    // none) and the lock that serialises its use: StoreClient is one thread at a time.
    bootstrap::StoreClient* store = nullptr;
    std::shared_ptr<Mutex> store_mu;
    net::AuthKey key;  // authenticates the tcp data connections (and those of splits)
  };

  // Collective: connects the mesh through `allgather`, then runs a barrier so that when
  // it returns every rank has finished the rendezvous. `options` override the
  // environment's settings (comm/comm_config.h).
  static Result<std::unique_ptr<Communicator>> Create(int rank, int size, uint64_t comm_id,
                                                      const transport::AllGatherFn& allgather,
                                                      Bootstrap bootstrap,
                                                      const CommOptions& options = {});
  ~Communicator() override;

  int rank() const { return rank_; }
  int size() const { return size_; }
  uint64_t id() const { return id_; }
  // weftConfig_t's name ("" for none).
  const std::string& name() const { return config_.name; }
  // The timeout of calls issued from now on (weftCommSetTimeout); a call keeps the one
  // in effect when it was issued. Any thread: an atomic, so that a thread setting it
  // never waits behind a call in flight.
  double timeout_s() const { return timeout_s_.load(std::memory_order_acquire); }
  // REQUIRES: seconds > 0.
  void SetTimeout(double seconds) {
    calls_.RaiseTimeout(seconds);  // first: a call issued with it must find the bound raised
    timeout_s_.store(seconds, std::memory_order_release);
  }
  // The algorithm of the user's collective this rank last started ("" before the
  // first): a registry name, static, readable from any thread. For tools and benchmarks.
  const char* last_algorithm() const { return last_algorithm_.load(std::memory_order_relaxed); }

  Status Run(const Call& call);
  Result<std::shared_ptr<Request>> Submit(const Call& call);
  // NCCL semantics on a CUDA stream (docs/GPU.md): returns once the call is enqueued;
  // work queued on `stream` afterwards waits for it. Buffers may be device memory.
  // Host buffers with a null stream simply run as Run does.
  Status RunOnStream(const Call& call, void* stream);
  // A blocking or stream call made inside weftGroupStart/End (comm/call_group.h): checked
  // now, with the timeout in effect now, and issued at the group's end by IssueInGroup.
  Result<Call> CheckForGroup(const Call& call) const;
  // Issues a checked call of a group without waiting for it: on `stream` (or, with device
  // buffers, the default stream) sharing the group's ticket there (`share`, one per
  // stream). Returns the request the group's end waits for, or nullptr where the stream
  // itself waits for the call (WEFT_CUDA_STREAM_WAIT=memop). Host buffers without a
  // stream are queued as Submit does.
  Result<std::shared_ptr<Request>> IssueInGroup(const Call& call, void* stream, StreamShare* share);
  // What `calls` (checked by CheckForGroup) would take, in microseconds, without running
  // them (comm/call_estimate.h). Any thread.
  Result<double> EstimateUs(const std::vector<Call>& calls) const {
    return estimator_.EstimateUs(calls);
  }
  // The first fatal error (ok while the communicator is healthy).
  Status AsyncError() { return errors_.AsyncError(); }
  // Collective over this communicator; nullptr (and ok) for color < 0. (comm/split.cc)
  // `options` (weftCommSplitConfig's, checked): a timeout of 0 takes this
  // communicator's current one.
  Result<std::unique_ptr<Communicator>> Split(int color, int key,
                                              const CommOptions& options = {});
  const Bootstrap& bootstrap() const { return bootstrap_; }
  // 0, 1, 2, ...: the index of this rank's next weftCommShrink on this communicator (every
  // survivor counts its own calls, so the k-th calls meet in the same store keys).
  uint64_t NextShrinkEpoch() { return shrink_count_.fetch_add(1); }

  // Abandons everything: the call running now (on any thread) and every queued or pending
  // call complete with Aborted within one poll interval (<= 100 ms); peers are sent the
  // cause and the links are shut down and closed; the worker is joined. Returns promptly
  // whatever the peers' state (never waits on a peer). Afterwards every call returns
  // Aborted; only LastError, SetLastError and the destructor remain useful. Idempotent.
  void Abort();

  // The last error message on this communicator ("" if none).
  std::string LastError() { return errors_.LastError(); }
  void SetLastError(const Status& status) { errors_.SetLastError(status); }
  // weftCommRegister's buffers (thread-safe). Owned here, not by the handle, because a
  // call running on the worker may outlive the handle.
  Registry& registry() { return registry_; }

 private:
  Communicator(int rank, int size, uint64_t id, const CommConfig& config,
               std::unique_ptr<transport::Mesh> mesh, sched::Planner planner,
               std::shared_ptr<const sched::Topology> topology, Bootstrap bootstrap);

  // The device path's host rounds: collectives of the library's own, over the mesh.
  DevicePath::Host DeviceHost(const std::vector<std::string>& host_ids);

  // CallQueue::Runner: the worker's side, under exec_mu_.
  bool PointToPointInFlight() override;
  void ProgressPointToPoint() override;
  void RunTask(Task task) override;

  Status ExecuteOrFail(const Call& call, uint64_t seq) REQUIRES(exec_mu_);
  // WEFT_CHECK_CALLS (comm/call_check.h): Ok, or InvalidUsage naming the field and ranks
  // that differ (the communicator stays usable), or the exchange's own failure (fatal).
  // Inline: most calls are not checked, and they pay only the test.
  Status CheckCall(const Call& call, uint64_t seq) REQUIRES(exec_mu_) {
    return ShouldCheck(config_.check_calls, call) ? ExchangeCallCheck(call, seq) : Status::Ok();
  }
  Status ExchangeCallCheck(const Call& call, uint64_t seq) REQUIRES(exec_mu_);
  // Records `cause` as the failure, tells the peers and shuts the links.
  void Fail(const Status& cause) REQUIRES(exec_mu_);
  // Fails with AbortCause() if Abort() was called and nothing failed yet; then the
  // failure (ok when healthy).
  const Status& FailureAfterAbort() REQUIRES(exec_mu_);
  // Runs `call` under the flight recorder. kind: the wire kind of the messages (0: the
  // call's own).
  Status Execute(const Call& call, uint64_t seq, uint16_t kind = 0) REQUIRES(exec_mu_);
  // `what`: CallName(call), which the caller has at hand.
  Status ExecuteSchedule(const Call& call, const char* what, uint64_t seq, uint16_t kind,
                         exec::Progress* progress) REQUIRES(exec_mu_);
  Status ExecuteSend(const Call& call, const char* what, uint64_t seq, exec::Progress* progress)
      REQUIRES(exec_mu_);
  // A blocking receive: through the engine, which matches it and which this thread runs
  // (the worker is idle).
  Status ReceiveThroughEngine(const Call& call) REQUIRES(exec_mu_);
  // `call` with the timeout in effect now (Call::timeout_s), as the issuing calls take it;
  // one stamped already (RunOnStream passing it to Run) keeps its own.
  Call Stamped(const Call& call) const {
    Call c = call;
    c.timeout_s = TimeoutOf(call);
    return c;
  }
  // The bound of `call`'s waits: its own timeout, or the communicator's for the
  // library's calls that carry none.
  double TimeoutOf(const Call& call) const { return TimeoutOr(call, timeout_s()); }
  // Queues a call for the worker behind a gate on `stream` (device buffers or a stream);
  // with `share`, a group's place on that stream (IssueInGroup).
  Result<std::shared_ptr<Request>> EnqueueOnStream(const Call& call, void* stream,
                                                   StreamShare* share = nullptr);
  void StartPointToPoint(Task task) REQUIRES(exec_mu_);
  Result<std::vector<std::string>> AllGatherStrings(const std::string& mine);

  const int rank_;
  const int size_;
  const uint64_t id_;
  const CommConfig config_;
  Bootstrap bootstrap_;
  std::atomic<bool> aborting_{false};  // set by Abort(); read by running calls
  std::atomic<double> timeout_s_;  // for calls issued from now on: see timeout_s()
  std::atomic<uint64_t> split_count_{0};
  std::atomic<uint64_t> shrink_count_{0};
  std::unique_ptr<FlightRecorder> recorder_;  // thread-safe
  ErrorBoard errors_;

  Mutex exec_mu_;  // held while a call executes
  std::unique_ptr<transport::Mesh> mesh_ GUARDED_BY(exec_mu_);  // null after Abort()
  Status failure_ GUARDED_BY(exec_mu_);  // first fatal error, or ok
  std::unique_ptr<exec::Executor> executor_ GUARDED_BY(exec_mu_);
  // Non-blocking sends and receives in flight. Touched only by the worker, and by Abort
  // once the worker is joined.
  std::unique_ptr<exec::P2PEngine> p2p_;
  Temporaries temps_ GUARDED_BY(exec_mu_);
  const CallEstimator estimator_;  // the planner's and topology's copies: immutable
  PlanCache plans_ GUARDED_BY(exec_mu_);
  Registry registry_;
  RegisteredPath registered_ GUARDED_BY(exec_mu_);
  // The algorithm of the user's last collective, for readers on any thread; stored only
  // when it changes.
  std::atomic<const char*> last_algorithm_{""};
  DeviceCalls device_;  // see device_calls.h for which thread uses what
  // Last: destroyed first, so that the worker is joined before what it uses goes.
  CallQueue calls_;
};

}  // namespace weft::comm
