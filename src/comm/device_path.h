// Collectives on CUDA device buffers (docs/GPU.md), run by the communicator's worker
// once the caller's stream has reached the operation (gpu::StreamGate).
//
// Two ways to move the data, chosen per call, the same on every rank:
// - direct: every rank is on one host, every device can reach every other's memory
//   (the same GPU, or peers over NVLink/PCIe), and every buffer is shareable by CUDA
//   IPC. Ranks exchange IPC handles of their buffers (a small allgather over the host
//   links), then each *pulls* what it needs straight from its peers' buffers with copies
//   and the multi-input reduction kernel, and a host barrier ends each phase. One round
//   of reads replaces a schedule of messages: allreduce is a reduce-scatter by direct
//   loads then an allgather by direct copies (two-shot), or for small messages one
//   kernel that reduces every peer's whole input (one-shot).
// - staged: anything else (ranks on several hosts, host buffers on some rank, memory
//   that IPC cannot share). Device buffers are copied to pinned host memory, the host
//   collective runs its usual schedule over shm/tcp, and the result is copied back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/call.h"
#include "comm/staged_pipeline.h"
#include "comm/stream_staging.h"
#include "core/deadline.h"
#include "core/status.h"
#include "gpu/ipc.h"
#include "gpu/memory.h"
#include "gpu/stream_gate.h"

namespace weft::comm {

class DevicePath {
 public:
  // What the communicator lends: its host-side rounds (all on the worker thread).
  struct Host {
    int rank = 0;
    int size = 1;
    bool single_host = false;  // every rank on this host
    double timeout_s = 0;  // the communicator's at creation: calls carry their own
    // Allgather of `bytes` from every rank, in rank order, as a kDeviceSync round of `seq`.
    std::function<Status(const void* mine, size_t bytes, void* all, uint64_t seq)> allgather;
    std::function<Status(uint64_t seq)> barrier;
    // The host collective (the staged path's middle).
    std::function<Status(const Call& call, uint64_t seq)> execute;
  };

  // On `device`, which becomes current on the calling thread.
  static Result<std::unique_ptr<DevicePath>> Create(int device, Host host);
  ~DevicePath();

  int device() const { return device_; }
  gpu::StreamGate& gate() { return *gate_; }

  // The collective; the caller has waited for the gate's ticket and releases it after.
  Status RunCollective(const Call& call, uint64_t seq, const Deadline& deadline);

  // Staging for point-to-point calls: a device buffer copied to or from host memory.
  Status CopyToHost(void* host, const void* src, size_t bytes, const Deadline& deadline);
  Status CopyFromHost(void* dst, const void* host, size_t bytes, const Deadline& deadline);

  // Whether `call` is staged on the caller's stream at call time (comm/stream_staging.h)
  // rather than run by the worker behind the gate: the stream waits on flags
  // (WEFT_CUDA_STREAM_WAIT=memop) and the call is staged by configuration (several
  // hosts, or WEFT_CUDA_PATH=staged), so every rank decides alike without an exchange.
  bool StagesOnStream(const Call& call) const {
    return !gate_->synchronous() && call.kind == CallKind::kCollective &&
           (mode_ == "staged" || !host_.single_host);
  }
  StreamStaging& staging() { return staging_; }

  // Which path the last collective took ("direct" or "staged"), for tests and tools.
  const char* last_path() const { return last_path_; }

 private:
  struct Card;
  DevicePath(int device, Host host);

  Result<bool> DirectCapable(const std::vector<Card>& cards, uint64_t seq);
  Status RunDirect(const Call& call, const std::vector<Card>& cards, uint64_t seq,
                   const Deadline& deadline);
  Status RunStaged(const Call& call, uint64_t seq, const Deadline& deadline);
  Result<void*> PeerPtr(const Card& card, bool input);

  const int device_;
  Host host_;
  std::unique_ptr<gpu::StreamGate> gate_;
  void* stream_ = nullptr;  // internal: copies and kernels of the collectives
  gpu::IpcCache ipc_;
  gpu::DeviceBuffer scratch_;
  gpu::PinnedBuffer staged_;  // the worker's staging (RunStaged)
  StagedPipeline pipeline_;   // RunStaged's chunks, for calls large enough
  size_t stage_chunk_bytes_ = 0;  // WEFT_CUDA_STAGE_CHUNK; 0: unchunked
  StreamStaging staging_;      // the calling thread's (StagesOnStream)
  std::optional<bool> direct_capable_;  // decided collectively at the first direct try
  const char* last_path_ = "none";
  std::string mode_;  // WEFT_CUDA_PATH: auto, direct or staged
};

}  // namespace weft::comm
