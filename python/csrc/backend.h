// c10d::Backend "weft": torch.distributed collectives on a weft communicator.
//
// One communicator serves CPU and CUDA tensors (registered for both device types). An
// operation on CPU tensors is issued with weft's non-blocking calls and returns at once;
// the Completer finishes it. One on CUDA tensors is issued NCCL-style with weft's stream
// calls on torch's current stream (cuda_path.h). Data-moving operations move bytes (any
// dtype works); reducing ones map dtype and op through types.h.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <weft/weft.h>

#include "completer.h"

namespace weft_torch {

class WeftBackend : public c10d::Backend {
 public:
  // Collective over the group: rank 0 creates a weftUniqueId and publishes it in
  // `store` (torch's TCPStore, already prefixed per process group), the others read it,
  // and all call weftCommInitRankConfig. `timeout` (torch's group timeout) becomes the
  // communicator's timeout, unless WEFT_TIMEOUT is set, which then wins. `name`: the
  // communicator's name in weft's errors and logs ("" for none).
  WeftBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
              std::chrono::milliseconds timeout, const std::string& name = "");
  // torch's enable_reconfigure=True: no communicator until reconfigure() forms one (no
  // rendezvous now; the store is not used). rank and size are torch's until then.
  struct AwaitReconfigure {};
  WeftBackend(AwaitReconfigure, int rank, int size, std::chrono::milliseconds timeout,
              std::string name);
  // Takes ownership of `comm`, an initialized communicator (weftCommShrink's result).
  // `timeout`: the group timeout for operations without their own (0: the one `comm`
  // has).
  WeftBackend(weftComm_t comm, int rank, int size, std::chrono::milliseconds timeout);
  ~WeftBackend() override;

  const std::string getBackendName() const override { return "weft"; }
  uint64_t getSequenceNumberForGroup() override { return seq_; }
  // What split_group copies into the child group when the caller passes no options.
  c10::intrusive_ptr<Options> getBackendOptions() override {
    return c10::make_intrusive<Options>("weft", timeout_);
  }
  void shutdown() override;
  // From any thread, also while operations are in flight: they fail with weftAborted
  // (bounded, about 100 ms) and the peers' calls fail naming this rank. The group is
  // unusable afterwards.
  void abort() override;
  // The error that failed the group (weftCommGetAsyncError): TIMEOUT, REMOTE_ERROR (a
  // peer failed or left), COMM_ERROR (anything else, an abort included); SUCCESS while
  // it works, and after a normal shutdown; COMM_ERROR after a failed reconfigure.
  c10d::ErrorType getError() override;
  // torch's ProcessGroup._set_default_timeout / Backend::setTimeout: the timeout of the
  // operations issued from now on that carry none of their own (an options struct's
  // `timeout` wins for its operation). Each operation keeps the timeout it was issued
  // with (weftCommSetTimeout). Wins over WEFT_TIMEOUT: it is an explicit request.
  void setTimeout(std::chrono::milliseconds timeout) override;
  // torch's _add_ephemeral_timeout_for_all_pgs (inductor calls it when a cache hit saved
  // this rank compile time that other ranks may still spend): `timeout` is added to the
  // timeout of every operation issued from now on, until the first of them completes
  // (successfully or not). Calls add up; each extension ends with its own first
  // operation. Operations issued before keep their timeout.
  void addEphemeralTimeout(const std::chrono::milliseconds& timeout) override;

  // Coalescing (torch's _coalescing_manager, batch_isend_irecv): a weft group call
  // (weftGroupStart/End) from startCoalescing to endCoalescing, on the calling thread.
  // CPU ops run as they are issued (weft's calls are non-blocking already); CUDA ops'
  // stream calls are issued together by weftGroupEnd and share one place on the stream,
  // so that sends and receives between ranks that both send first complete. The Work of
  // endCoalescing completes when all of them have, failing with the first error.
  bool supportsCoalescing() const override { return true; }
  // Time estimation (torch's _time_estimator, which inductor's communication analysis
  // uses): the ops issued between startTimeEstimate and endTimeEstimate are not run (their
  // Works complete at once, their outputs are left as they are); endTimeEstimate returns
  // what weft's cost model gives them, in microseconds (weftGroupSimulateEnd: the
  // planner's algorithm for each and its estimate under this group's link figures).
  bool supportsTimeEstimation() const override { return true; }
  // torch's _register_on_completion_hook: called on the completer thread after each CPU
  // op's Work completed (CUDA ops complete on their stream and are not reported), with
  // the op's type, seq, and its issue and completion times (activeDuration: from issue to
  // completion, queueing included). One hook per group, as ProcessGroupNCCL.
  void registerOnCompletionHook(OnCompletionHook&& hook) override;
  // Waits until every op issued so far has completed (Works and hooks included).
  void waitForPendingWorks() override;
  // Abort hooks: run before weft aborts this group (abort(), which Work::abort calls too),
  // and when the completer first sees one of its ops fail: weft fails a communicator at
  // its first error (a timeout, a peer's failure), which is where ProcessGroupNCCL's
  // watchdog would abort. On the thread that gets there; a failure and the abort after it
  // run them twice (torch asks hooks to be idempotent). A hook that throws is reported
  // (TORCH_WARN) and the others still run.
  bool supportsAbortHooks() const override { return true; }
  // Keyed completion hooks (torch's FlightRecorderHook, which torch attaches to every
  // group, registers one to retire its entries): called on the completer thread once per
  // CPU op whose Work completed successfully, with the Work's getCompletionKey(); a failed
  // op fires nothing. duration_ms is nullopt: weft does not time an op apart from its
  // queueing. CUDA ops complete on their stream and are not reported. A hook that throws
  // is reported (TORCH_WARN) and the others still run.
  bool supportsCompletionHooks() const override { return true; }
  void registerCompletionHook(int64_t hook_id, c10d::CompletionHook hook) override;
  void unregisterCompletionHook(int64_t hook_id) override;
  // allocate_tensor (FSDP2's set_allocate_memory_from_process_group_for_comm): a 1-D CPU
  // tensor in weft's shared memory, as weft.torch.empty makes, which collectives on one
  // host read in place (a single pass: "Tensors in shared memory" in docs/TORCH.md).
  // supports_tensor_alloc is true for the CPU (device index -1) only; a CUDA device is
  // refused by allocate_tensor with the reason.
  bool supportsTensorAlloc(c10::DeviceIndex device_index) override { return device_index < 0; }
  at::Tensor allocateTensor(long size, at::TensorOptions options = {}) override;
  void registerAbortHook(int64_t hook_id, c10d::AbortHook hook) override;
  void unregisterAbortHook(int64_t hook_id) override;
  void startTimeEstimate() override;
  float endTimeEstimate() override;

  // torch's split_group / new_group(device_id=...): a new communicator of `ranks`
  // (parent ranks, sorted by torch), rendezvous in the child's store as at init; only
  // the members call it (nullptr for a rank not in `ranks`, as gloo does).
  bool supportsSplitting() const override { return true; }
  // torch's ProcessGroup.merge_remote_group (groups of separate jobs joining into one):
  // a new communicator of `size` ranks met in `store`, this process at `rank` (torch
  // numbers the callers in the store's order of arrival).
  c10::intrusive_ptr<c10d::Backend> merge(const c10::intrusive_ptr<c10d::Store>& store,
                                          const c10::intrusive_ptr<Options>& opts,
                                          const int& rank, const int& size) override;
  // torch's shrink_group: weftCommShrink (torch's SHRINK_DEFAULT/SHRINK_ABORT are weft's
  // flag values). Every remaining rank calls it; this group stays as it was (aborted,
  // with SHRINK_ABORT) and is destroyed by torch as usual.
  bool supportsShrinking() const override { return true; }
  c10::intrusive_ptr<c10d::Backend> shrink(const std::vector<int64_t>& ranks_to_exclude,
                                           int shrink_flags,
                                           const c10::intrusive_ptr<Options>& opts) override;
  // Fault tolerance without torch's store (reconfigure.cpp): get_reconfigure_handle is
  // this process's own weft rendezvous ("weft:" and a weftUniqueId, whose store this
  // process serves until it exits; it carries the secret that admits a peer, so pass it
  // only to the job's own processes). reconfigure forms a new communicator of the ranks
  // whose handles it is given, met at the first handle's store under a weftUniqueIdDerive
  // of it salted with `uuid`: a list gives ranks by position, a set by sorted order. The
  // communicator this group had (failed or not) is aborted first: work still pending on
  // it fails. Synchronous: the returned Work is complete, and a failure (a peer that does
  // not come within the timeout, bad handles) throws, leaving the group without a
  // communicator until a reconfigure succeeds; an abort() meanwhile makes it raise and
  // aborts what it formed. Any weft group can reconfigure, also one
  // not created with enable_reconfigure. Not while coalescing or estimating.
  bool supportsReconfigure() const override { return true; }
  c10d::ReconfigureHandle get_reconfigure_handle() const override;
  c10::intrusive_ptr<c10d::Work> reconfigure(const c10d::ReconfigureOptions& opts) override;
  bool isInitialized() override;
  // One-sided windows (window.h): on one host, over tensors in weft's shared memory.
  // new_window is collective; with a tensor it registers it (tensor_register).
  bool supportsWindow() const override { return true; }
  c10::intrusive_ptr<c10d::Window> new_window(const std::optional<at::Tensor>& tensor) override;
  // weftWinCreate on this group's communicator, for WeftWindow::tensor_register; throws
  // with weft's message (the same on every rank).
  void CreateWindow(void* buff, size_t bytes, weftWindow_t* win);
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store,
                                          const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  // A sparse COO tensor (CPU) is summed as gloo sums one (sparse.cpp): the ranks'
  // indices and values are all-gathered and coalesced, and the tensor takes the result
  // in place (its nnz changes). SUM only; allreduce_sparse is the same call.
  c10::intrusive_ptr<c10d::Work> allreduce_sparse(std::vector<at::Tensor>& tensors,
                                                  const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank,
                                      int tag) override;
  // dist.recv / irecv without a source: weftIRecvAny (CPU tensors), the Work's
  // sourceRank() the peer it came from.
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  // torch's monitored_barrier, as gloo defines it (monitored_barrier.cpp): rank 0 names
  // the ranks that did not arrive within `opts.timeout` (the first, or all of them with
  // `wait_all_ranks`); the others fail when rank 0 does not release them. Blocking. A
  // failure leaves the group failed, as any weft timeout does.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) override;

 private:
  // Issues the weft calls of one operation; stops at the first call that fails. Each
  // call is given in both forms: non-blocking (CPU tensors: collects the requests) and on
  // a stream (CUDA tensors: `stream` set, `on_stream` true).
  using Timeout = std::chrono::milliseconds;  // an options struct's; <= 0: unset

  struct Issuer {
    weftComm_t comm;
    const char* name;
    weftStream_t stream = nullptr;
    bool on_stream = false;
    std::vector<weftRequest_t> requests;
    std::string error;
    void operator()(const std::function<weftResult_t(weftRequest_t*)>& call,
                    const std::function<weftResult_t(weftStream_t)>& stream_call);
  };

  // CPU (`device` is the CPU): issues `issue` under the issue lock (so the Completer sees
  // weft's issue order) and hands the requests to the Completer. Throws at once if
  // nothing could be issued. CUDA: LaunchOnStream.
  // `timeout`: the operation's (its options struct's), else (unset) the group's.
  c10::intrusive_ptr<c10d::Work> Launch(c10d::OpType type, const char* name, Timeout timeout,
                                        c10::Device device,
                                        std::vector<at::Tensor> outputs,
                                        const std::function<void(Issuer&)>& issue,
                                        std::function<void()> on_success,
                                        std::vector<at::Tensor> keep_alive,
                                        bool point_to_point = false);
  // CUDA: issues `issue` on the current stream of `device` under the issue lock, runs
  // `on_success` (copy-backs, queued on that stream) and returns a completed CudaWork.
  // Throws if a call fails. Blocks for as long as weft's stream calls do (by default
  // until the operation is complete, WEFT_CUDA_STREAM_WAIT).
  c10::intrusive_ptr<c10d::Work> LaunchOnStream(c10d::OpType type, const char* name,
                                                Timeout timeout, c10::Device device,
                                                std::vector<at::Tensor> outputs,
                                                const std::function<void(Issuer&)>& issue,
                                                std::function<void()> on_success,
                                                std::vector<at::Tensor> keep_alive,
                                                bool point_to_point);
  // Between startTimeEstimate and endTimeEstimate: issues `issue`'s calls into the open
  // weft group (as stream calls with no stream, which a group keeps without running) and
  // returns a completed Work with no outputs. An op that cannot be issued ends the
  // estimate (torch's context manager would leave it open) and throws.
  c10::intrusive_ptr<c10d::Work> Estimated(c10d::OpType type, const char* name,
                                           const std::function<void(Issuer&)>& issue);
  // Requires issue_mu_. Inside startCoalescing/endCoalescing every op must be on the
  // device of the first (one Work for the batch, CPU-style or stream-ordered).
  void CheckCoalescingDevice(c10::Device device, const char* name);
  // For the calls that wait for their own operations (sparse all-reduce, monitored
  // barrier): refused inside a coalesced batch, whose operations a wait cannot end; and
  // inside a time estimate, where nothing runs, which it ends (as an op that cannot be
  // estimated does). Takes issue_mu_.
  void RequireOutsideBatch(const char* name);
  // Requires issue_mu_. Throws, naming `name` and why, when there is no communicator
  // (never formed, aborted, shut down, or the last reconfigure failed).
  void RequireComm(const char* name);
  // Requires issue_mu_. Gives comm_ the timeout of the operation about to be issued
  // (weftCommSetTimeout), when it differs from the one it has.
  // The extensions of addEphemeralTimeout whose first operation has not completed are
  // added to it.
  void ApplyTimeout(Timeout timeout, const char* name);
  // Requires issue_mu_. `work` is the first operation of the extensions still waiting
  // for one (called once the operation is issued).
  void StartEphemeral(const c10::intrusive_ptr<WeftWork>& work);
  // What a Work's abort() calls: abort() on this backend if it still exists (a weak
  // reference: a Work may outlive its group).
  std::function<void()> AbortGroupFn();
  // The abort hooks, in id order (any thread), and a function that runs them if this
  // backend still exists (for the completer).
  void RunAbortHooks();
  void RunCompletionHooks(uint64_t completion_key);
  std::function<void()> AbortHooksFn();
  std::function<void(uint64_t)> CompletionHooksFn();
  // Gives a new completer the hooks registered so far (reconfigure's new communicator).
  void AttachHooks(Completer& completer);

  c10::intrusive_ptr<c10d::Work> AllReduceMany(std::vector<at::Tensor>& tensors,
                                               const c10d::ReduceOp& op, c10d::OpType type,
                                               Timeout timeout);
  c10::intrusive_ptr<c10d::Work> AllGatherTensors(std::vector<at::Tensor>& outputs,
                                                  std::vector<at::Tensor>& inputs,
                                                  c10d::OpType type, Timeout timeout);
  // All-gathers inputs[i] into per_input[i] (world-size tensors each).
  c10::intrusive_ptr<c10d::Work> AllGatherLists(std::vector<std::vector<at::Tensor>>& per_input,
                                                std::vector<at::Tensor>& inputs,
                                                c10d::OpType type, Timeout timeout);
  c10::intrusive_ptr<c10d::Work> ReduceScatterTensors(std::vector<at::Tensor>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::ReduceOp& op,
                                                      c10d::OpType type, Timeout timeout);
  // Pairwise exchange: send_bufs[p] to p and recv_bufs[p] from p (byte buffers of this
  // rank's own slot are copied locally). Used by alltoall with unequal splits.
  c10::intrusive_ptr<c10d::Work> Exchange(c10d::OpType type, Timeout timeout,
                                          c10::Device device, std::vector<at::Tensor> outputs,
                                          std::vector<at::Tensor> send_bufs,
                                          std::vector<at::Tensor> recv_bufs,
                                          std::function<void()> on_success,
                                          std::vector<at::Tensor> keep_alive);

  std::chrono::milliseconds timeout_;  // the init timeout, for splits without options
  // The timeout of operations without their own: the init timeout (or the one WEFT_TIMEOUT
  // gave the communicator), then setTimeout's (issue_mu_).
  uint64_t default_timeout_ms_ = 0;
  uint64_t comm_timeout_ms_ = 0;  // the one comm_ has now (issue_mu_)
  struct Ephemeral {
    uint64_t ms = 0;
    // The first operation issued after the extension; empty until there is one. Weak:
    // the completer holds a Work until it completes, so a Work gone has completed.
    std::optional<c10::weak_intrusive_ptr<WeftWork>> first;
  };
  std::vector<Ephemeral> ephemeral_;  // addEphemeralTimeout's, not yet ended (issue_mu_)
  weftComm_t comm_ = nullptr;
  bool aborted_ = false;  // abort() ran (issue_mu_)
  std::string name_;      // the communicator's name ("" for none), for reconfigure
  // Why there is no communicator yet: created with enable_reconfigure, or the last
  // reconfigure failed (its message); "" otherwise (issue_mu_).
  std::string not_formed_;
  bool reconfiguring_ = false;  // a reconfigure is forming a communicator (issue_mu_)
  bool reconfigure_failed_ = false;  // the last one failed: getError's COMM_ERROR (issue_mu_)
  std::vector<int64_t> used_uuids_;  // reconfigure's, each allowed once (issue_mu_)
  mutable std::mutex handle_mu_;
  mutable std::string handle_;  // get_reconfigure_handle's, made on first use (handle_mu_)
  std::mutex issue_mu_;  // weft: one thread at a time per communicator
  std::mutex hooks_mu_;
  std::map<int64_t, c10d::AbortHook> abort_hooks_;            // (hooks_mu_)
  std::map<int64_t, c10d::CompletionHook> completion_hooks_;  // (hooks_mu_)
  // Shared: waitForPendingWorks waits on it without the issue lock (so abort() can end
  // the wait), while shutdown() may drop the group's reference.
  std::shared_ptr<Completer> completer_;
  uint64_t seq_ = 0;  // collectives issued (getSequenceNumberForGroup)
  // Between startTimeEstimate and endTimeEstimate (written under issue_mu_ by the thread
  // that issues; read by Launch before it takes the lock).
  std::atomic<bool> estimating_{false};
  bool coalescing_ = false;  // between startCoalescing and endCoalescing (issue_mu_)
  std::vector<c10::intrusive_ptr<WeftWork>> coalesced_;  // their Works (issue_mu_)
  std::optional<c10::Device> coalesced_device_;  // the first one's device (issue_mu_)
  // CUDA members of the batch: what follows their stream calls (copy-backs, the
  // allocator's stream records, the end event), done once weftGroupEnd has issued them.
  std::vector<std::function<void()>> coalesced_after_;  // (issue_mu_)
};

// `name`: the weft communicator's name ("" for none), as WeftBackend's.
// `enable_reconfigure`: no rendezvous now; reconfigure() forms the communicator.
c10::intrusive_ptr<c10d::Backend> CreateWeftBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    const std::chrono::duration<float>& timeout,
                                                    const std::string& name,
                                                    bool enable_reconfigure = false);

}  // namespace weft_torch
