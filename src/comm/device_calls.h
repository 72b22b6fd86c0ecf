// The communicator's calls on CUDA device buffers or streams (docs/GPU.md): which device
// a call is on, its place on the caller's stream (gpu::StreamGate), and running it on
// the worker through the device path (comm/device_path.h).
//
// Admit runs on the submitting thread under the call queue's lock (tickets are taken in
// queue order); Run and StartPointToPoint run on the worker under the execution lock.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "comm/call.h"
#include "comm/call_queue.h"
#include "comm/device_path.h"
#include "core/status.h"
#include "exec/p2p_engine.h"
#include "gpu/stream_gate.h"

namespace weft::comm {

// A group call's place on one stream (comm/call_group.h): the first of the group's calls
// on the stream takes the ticket, the others share it, so the stream waits once for all
// of them and none waits behind another (a send and a receive between two ranks that
// both send first would otherwise deadlock on their streams). The group holds the
// ticket too until every call is issued: destroying the share lets it go.
class StreamShare {
 public:
  StreamShare() = default;
  ~StreamShare() {
    if (gate_ != nullptr) gate_->Release(ticket_);
  }
  StreamShare(const StreamShare&) = delete;
  StreamShare& operator=(const StreamShare&) = delete;

 private:
  friend class DeviceCalls;
  gpu::StreamGate* gate_ = nullptr;  // set with the ticket by the first call
  gpu::StreamGate::Ticket ticket_;
};

class DeviceCalls {
 public:
  // What the communicator lends besides the device path's host rounds.
  struct Hooks {
    // WEFT_CHECK_CALLS before a collective (comm/call_check.h).
    std::function<Status(const Call& call, uint64_t seq)> check;
    // Fails the communicator with `cause`.
    std::function<void(const Status& cause)> fail;
    // Set by weftCommAbort.
    const std::atomic<bool>* abort = nullptr;
  };

  DeviceCalls(DevicePath::Host host, exec::P2PEngine* p2p, Hooks hooks)
      : host_(std::move(host)), p2p_(p2p), hooks_(std::move(hooks)) {}

  // Whether a buffer of `call` is device memory. Free without CUDA.
  static bool HasDeviceBuffer(const Call& call);
  // The device `call`'s buffers are on (the current one when none is): InvalidArgument
  // when CUDA is unusable or the buffers are on two devices.
  Result<int> DeviceOf(const Call& call) const;
  // Under the queue's lock: creates the device path at the first call, and either
  // stages the call on `stream` (comm/stream_staging.h) or takes its ticket there (with
  // `share`, a group's: the ticket its first call took).
  Status Admit(Task& task, int device, void* stream, StreamShare* share = nullptr);
  // No wait is put on the stream: the host call must wait for completion (StreamGate).
  bool synchronous() const { return path_->gate().synchronous(); }
  // A dropped task's ticket, so the stream behind it does not wait forever.
  void Release(const Task& task);

  // On the worker. `failure`: the communicator's failure so far (ok when healthy).
  Status RunCollective(Task& task, const Status& failure);
  // A task staged on its stream: the host collective between the stream's flags. No
  // device call.
  Status RunStaged(Task& task, const Status& failure);
  // Completes the task's request when done.
  void StartPointToPoint(Task task, const Status& failure);

 private:
  // The bound of `call`, from now: the timeout it was issued with (Call::timeout_s).
  Deadline CallDeadline(const Call& call) const {
    return Deadline::AfterSeconds(TimeoutOr(call, host_.timeout_s));
  }

  DevicePath::Host host_;
  exec::P2PEngine* const p2p_;
  Hooks hooks_;
  // Created by Admit under the queue's lock; the worker reads it only for tasks it took
  // from the queue after that.
  std::unique_ptr<DevicePath> path_;
};

}  // namespace weft::comm
