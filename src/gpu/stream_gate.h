// Orders weft's work on a caller's CUDA stream. Begin(stream) records an event ("the
// inputs are ready"); the communicator's worker waits for it, runs the operation, and
// calls Release exactly once per ticket, on success and on failure alike. A ticket may
// be shared (Share): the operations of one group call (comm/call_group.h) wait for the
// same event, and the stream is let go when the last of them releases it.
//
// Two ways to keep later work on the stream from overtaking the operation:
// - synchronous (the default): nothing is put on the stream; the host call waits for the
//   operation to finish before it returns, so whatever the caller queues next comes
//   after. Correct ordering; the host does not run ahead of the GPU.
// - stream memory operation (WEFT_CUDA_STREAM_WAIT=memop): Begin also makes the stream
//   wait on a 32-bit flag in pinned host memory (cuStreamWaitValue32) that Release sets,
//   and the host call returns at once (NCCL's semantics). Experimental: it deadlocked on
//   an H200 when the caller blocked in the driver while the operation was pending (see
//   stream_gate.cc). A GPU thread polling the flag was tried first and rejected too: with
//   several processes on one GPU the polling kernels starved the copies and reductions
//   they waited for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::gpu {

class Device;

class StreamGate {
 public:
  struct Ticket {
    void* ready = nullptr;  // the device's event (gpu/device.h)
    uint32_t slot = 0;
    uint32_t value = 0;
    // Set by Share: how many copies are still to be released (null: one owner).
    std::shared_ptr<std::atomic<int>> holders;
  };

  // On the current device.
  static Result<std::unique_ptr<StreamGate>> Create();
  ~StreamGate();

  // stream: a cudaStream_t (nullptr: the legacy default stream).
  Result<Ticket> Begin(void* stream);
  // Polls the ticket's event until it completes or `deadline`.
  Status WaitReady(const Ticket& ticket, const Deadline& deadline);
  // Each copy of a shared ticket is released once; the stream goes on at the last.
  void Release(const Ticket& ticket);
  // Another holder of `ticket` (which becomes shared): a copy to be released on its own.
  static Ticket Share(Ticket& ticket);

  // No wait is put on the stream: the caller waits for completion instead.
  bool synchronous() const { return !memop_; }
  // "stream memory operation" or "synchronous call".
  const char* mechanism() const;

 private:
  StreamGate() = default;
  static constexpr uint32_t kSlots = 4096;
  uint32_t* flags_ = nullptr;  // pinned, mapped; kSlots entries
  uint64_t issued_ = 0;
  uint64_t released_ = 0;  // counted by Release; issued_ - released_ = in flight
  Device* device_ = nullptr;
  bool memop_ = false;  // WEFT_CUDA_STREAM_WAIT=memop: the stream waits on the flag
};

}  // namespace weft::gpu
