// The staged path for large elementwise collectives (allreduce, broadcast, reduce), in
// chunks that overlap: while the host collective runs on chunk k, the device copies chunk
// k+1 (and later ones) down to pinned memory on one stream and chunk k-1 back up on
// another. Unchunked, a staged call costs D2H + host + H2D; chunked, about the slowest of
// the three plus one chunk of each of the others. Collectives whose input and output
// blocks do not line up chunk for chunk (allgather, reduce-scatter, all-to-all, gather,
// scatter) stay unchunked.
//
// Used by the worker (DevicePath::RunStaged), behind the caller's stream gate, so the
// streams here are the path's own. Every rank of a call chunks the same way (the chunk
// size is a communicator setting, the count is the call's), so the chunks' host
// collectives match across ranks; they run in order under the call's sequence number.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "comm/call.h"
#include "comm/stream_staging.h"
#include "core/deadline.h"
#include "core/status.h"
#include "gpu/device.h"

namespace weft::comm {

class StagedPipeline {
 public:
  // Most chunks one call is split into: more would only add per-chunk host rounds.
  static constexpr size_t kMaxChunks = 64;

  StagedPipeline() = default;
  StagedPipeline(const StagedPipeline&) = delete;
  StagedPipeline& operator=(const StagedPipeline&) = delete;
  ~StagedPipeline();

  // The chunk size this call would use with `chunk_bytes` configured; 0: run unchunked
  // (chunking off, a collective that does not chunk elementwise, or under two chunks).
  static size_t ChunkBytesFor(const Call& call, size_t chunk_bytes);

  // Runs `call` over `region` (laid out by `layout`) in chunks of `chunk` bytes.
  // `execute` runs one chunk's host collective. Whatever fails, the copies already queued
  // have finished (or the deadline passed) before this returns, so the region can be reused.
  Status Run(const Call& call, const StagingLayout& layout, char* region, size_t chunk,
             const Deadline& deadline, const std::function<Status(const Call&)>& execute);

 private:
  Status Prepare(size_t chunks);
  Status WaitEvent(gpu::Event event, const Deadline& deadline);
  void Drain();

  gpu::Device* device_ = nullptr;
  gpu::Stream down_ = nullptr;  // device -> pinned host
  gpu::Stream up_ = nullptr;    // pinned host -> device
  std::vector<gpu::Event> arrived_;  // per chunk: its copy down has finished
};

}  // namespace weft::comm
