#include "comm/staged_pipeline.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "gpu/runtime.h"

namespace weft::comm {

using sched::Collective;

StagedPipeline::~StagedPipeline() {
  if (device_ == nullptr) return;
  for (gpu::Event e : arrived_) device_->DestroyEvent(e);
  if (down_ != nullptr) device_->DestroyStream(down_);
  if (up_ != nullptr) device_->DestroyStream(up_);
}

size_t StagedPipeline::ChunkBytesFor(const Call& call, size_t chunk_bytes) {
  if (chunk_bytes == 0 || call.kind != CallKind::kCollective) return 0;
  // Element i of the input becomes element i of the output, on every rank that has them.
  if (call.coll != Collective::kAllReduce && call.coll != Collective::kBroadcast &&
      call.coll != Collective::kReduce)
    return 0;
  const size_t es = DataTypeSize(call.dtype);
  const size_t total = call.count * es;
  // Whole elements, on 64-byte boundaries so each chunk's copies and reductions stay aligned.
  size_t chunk = std::max<size_t>(chunk_bytes, (total + kMaxChunks - 1) / kMaxChunks);
  const size_t unit = 64 / std::gcd<size_t>(64, es) * es;
  chunk = (chunk + unit - 1) / unit * unit;
  return total >= 2 * chunk ? chunk : 0;
}

Status StagedPipeline::Prepare(size_t chunks) {
  if (device_ == nullptr) {
    device_ = gpu::ActiveDevice();
    if (device_ == nullptr) return InvalidArgument(gpu::NoDeviceReason());
  }
  // On the device current now (the path's), once: streams and events are reused.
  if (down_ == nullptr) {
    WEFT_ASSIGN_OR_RETURN(down_, device_->CreateStream());
  }
  if (up_ == nullptr) {
    WEFT_ASSIGN_OR_RETURN(up_, device_->CreateStream());
  }
  while (arrived_.size() < chunks) {
    WEFT_ASSIGN_OR_RETURN(gpu::Event e, device_->CreateEvent());
    arrived_.push_back(e);
  }
  return Status::Ok();
}

Status StagedPipeline::WaitEvent(gpu::Event event, const Deadline& deadline) {
  // Polled, so the wait is bounded (cudaEventSynchronize is not).
  for (int spins = 0;; ++spins) {
    WEFT_ASSIGN_OR_RETURN(bool done, device_->QueryEvent(event));
    if (done) return Status::Ok();
    if (deadline.expired())
      return DeadlineExceeded("a staged chunk's copy to the host did not finish in time");
    if (spins < 100)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void StagedPipeline::Drain() {
  // After a failure: the queued copies still read and write the region and the caller's
  // buffers. Waiting a bounded while for them keeps both safe to reuse in the usual case.
  const Deadline drain = Deadline::AfterSeconds(10);
  (void)device_->SyncStream(down_, drain);
  (void)device_->SyncStream(up_, drain);
}

Status StagedPipeline::Run(const Call& call, const StagingLayout& l, char* region, size_t chunk,
                           const Deadline& deadline,
                           const std::function<Status(const Call&)>& execute) {
  const size_t es = DataTypeSize(call.dtype);
  const size_t total = call.count * es;
  const size_t chunks = (total + chunk - 1) / chunk;
  WEFT_RETURN_IF_ERROR(Prepare(chunks));
  auto length = [&](size_t k) { return std::min(chunk, total - k * chunk); };
  auto at = [](const void* p, size_t off) {
    return p == nullptr ? nullptr : static_cast<const char*>(p) + off;
  };

  // Every chunk's copy down is queued now; chunk k's event says when it has landed.
  if (l.in_dev) {
    for (size_t k = 0; k < chunks; ++k) {
      Status st = device_->CopyAsync(region + l.in_offset + k * chunk, at(call.send, k * chunk),
                                     length(k), down_);
      if (st.ok()) st = device_->RecordEvent(arrived_[k], down_);
      if (!st.ok()) {
        Drain();
        return st;
      }
    }
  }
  const Call host = l.HostCall(call, region);
  for (size_t k = 0; k < chunks; ++k) {
    Status st = l.in_dev ? WaitEvent(arrived_[k], deadline) : Status::Ok();
    if (st.ok()) {
      Call piece = host;
      piece.send = at(host.send, k * chunk);
      piece.recv = const_cast<char*>(at(host.recv, k * chunk));
      piece.count = length(k) / es;
      st = execute(piece).WithContext(fmt::format("staged chunk {} of {}", k + 1, chunks));
    }
    if (st.ok() && l.out_dev)
      st = device_->CopyAsync(const_cast<char*>(at(call.recv, k * chunk)),
                              region + l.out_offset + k * chunk, length(k), up_);
    if (!st.ok()) {
      Drain();
      return st;
    }
  }
  if (!l.out_dev) return Status::Ok();
  Status st = device_->SyncStream(up_, deadline);
  if (!st.ok()) Drain();
  return st;
}

}  // namespace weft::comm
