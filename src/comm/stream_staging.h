// A collective on device buffers staged through host memory and ordered entirely on the
// caller's stream at call time, so the call returns at once and the worker makes no
// device call (NCCL's rule: every device call of an operation is made by the thread that
// issues it, when it issues it; a worker calling the driver while the caller's stream is
// parked is what hung on an H200, gpu/stream_gate.cc).
//
// Enqueue (the calling thread) puts on the stream: the input's copy into pinned memory,
// "ready", a wait for "go", the output's copy back, "free". RunHost (the worker) waits
// for "ready" by reading host memory, runs the host collective on the pinned copies, and
// writes "go" on success and failure alike, so the stream never waits forever. A slot
// (pinned buffer and its flags) is reused once the stream has written its "free".
//
// Allreduce, broadcast and reduce of at least two chunks (StagedPipeline::ChunkBytesFor,
// the same rule as the worker's staged path, so ranks on either path chunk alike) go in
// chunks, each with its own "ready" and "go": the stream copies every chunk down and
// marks it ready, then, chunk by chunk, waits for its "go" and copies it back. The host
// collective of chunk k runs while later chunks are still copied down and earlier ones
// copied back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/call.h"
#include "core/deadline.h"
#include "core/status.h"
#include "gpu/memory.h"

namespace weft::comm {

// Where a staged call's host copies lie: one pinned region holds the input and the
// output as the caller's buffers do (in place: the input at InPlaceOffset from the
// output), so the host schedule sees the same aliasing.
struct StagingLayout {
  size_t in_bytes = 0, out_bytes = 0;
  bool in_dev = false, out_dev = false;  // which buffers are device memory (staged)
  bool in_place = false;
  long long in_offset = 0;   // of the input's copy from the region's start
  long long out_offset = 0;  // of the output's copy
  size_t region_bytes = 0;

  static StagingLayout For(const Call& call, int rank, int size);
  // The host call over `region` (buffers that are host memory are used as they are).
  Call HostCall(const Call& call, char* region) const;
};

struct StagedCall;  // a call in flight on a stream (stream_staging.cc)

class StreamStaging {
 public:
  StreamStaging(int rank, int size);
  // WEFT_CUDA_STAGE_CHUNK (0: unchunked); set before the first Enqueue.
  void set_chunk_bytes(size_t bytes) { chunk_bytes_ = bytes; }
  ~StreamStaging();

  // On the calling thread, with `call` validated and its device current.
  Result<std::shared_ptr<StagedCall>> Enqueue(const Call& call, void* stream);
  // On the worker: bounded by `deadline`; gives up early once `*abort` is set.
  // `execute` runs the host collective.
  Status RunHost(StagedCall& staged, const Deadline& deadline, const std::atomic<bool>* abort,
                 const std::function<Status(const Call&)>& execute);
  // Lets the stream go on without running the call (it was dropped).
  static void Release(StagedCall& staged);

 private:
  struct Slot;
  Result<Slot*> FreeSlot();
  // Until the stream has marked chunk k ready, bounded by `deadline` and `*abort`.
  static Status WaitReady(const StagedCall& s, size_t k, const Deadline& deadline,
                          const std::atomic<bool>* abort);

  const int rank_, size_;
  size_t chunk_bytes_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // the calling thread's only
};

}  // namespace weft::comm
