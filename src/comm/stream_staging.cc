#include "comm/stream_staging.h"

#include <algorithm>

#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "comm/staged_pipeline.h"
#include "gpu/device.h"
#include "gpu/runtime.h"
#include "sched/schedule.h"

namespace weft::comm {
namespace {

// Slots in flight at once; past this a call waits for the oldest to finish. Calls are
// bounded by WEFT_TIMEOUT, so is that wait.
constexpr size_t kMaxSlots = 64;

// A slot's flags: "free", then "ready" and "go" for each chunk (one when unchunked).
constexpr size_t kFree = 0;
constexpr size_t kMaxChunks = StagedPipeline::kMaxChunks;
constexpr size_t kFlagWords = 1 + 2 * kMaxChunks;
size_t Ready(size_t k) { return 1 + 2 * k; }
size_t Go(size_t k) { return 2 + 2 * k; }

// Acquire: pairs with the stream's release (Device::WriteFlagAsync: the fake's release
// store; CUDA's stream write after the copies before it), publishing the staged input.
uint32_t Load(const uint32_t* flag) {
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(flag)).load(std::memory_order_acquire);
}

}  // namespace

StagingLayout StagingLayout::For(const Call& call, int rank, int size) {
  StagingLayout l;
  sched::CollectiveSpec spec{call.coll, rank, size, call.root, call.count};
  const size_t es = DataTypeSize(call.dtype);
  const bool use_in = UsesInput(call, rank) && call.send != nullptr;
  const bool use_out = UsesOutput(call, rank) && call.recv != nullptr;
  l.in_dev = use_in && gpu::Classify(call.send).device;
  l.out_dev = use_out && gpu::Classify(call.recv).device;
  l.in_bytes = l.in_dev ? sched::InputCount(spec) * es : 0;
  l.out_bytes = l.out_dev ? sched::OutputCount(spec) * es : 0;
  const long long off = sched::InPlaceOffset(spec) * static_cast<long long>(es);
  l.in_place = l.in_dev && l.out_dev &&
               static_cast<const char*>(call.send) == static_cast<const char*>(call.recv) + off;
  if (l.in_place) {
    // The output at -lo, the input at `off` from it (negative when the output is a block
    // of the input: reducescatter, scatter).
    const long long lo = std::min(0LL, off);
    const long long hi = std::max<long long>(static_cast<long long>(l.out_bytes), off + l.in_bytes);
    l.out_offset = -lo;
    l.in_offset = off - lo;
    l.region_bytes = static_cast<size_t>(hi - lo);
  } else {
    l.out_offset = 0;
    l.in_offset = static_cast<long long>((l.out_bytes + 63) / 64 * 64);
    l.region_bytes = static_cast<size_t>(l.in_offset) + l.in_bytes;
  }
  return l;
}

Call StagingLayout::HostCall(const Call& call, char* region) const {
  Call host = call;
  if (in_dev) host.send = region + in_offset;
  if (out_dev) host.recv = region + out_offset;
  return host;
}

struct StreamStaging::Slot {
  gpu::PinnedBuffer region;
  uint32_t* flags = nullptr;  // kFlagWords: pinned, from the device
  uint32_t gen = 0;           // the last use's value; free once flags[kFree] == gen
};

struct StagedCall {
  Call host;          // over the slot's region
  uint32_t* flags;    // the slot's
  uint32_t gen;
  size_t chunks = 1;  // the host call split in this many (the last may be shorter)
  size_t chunk = 0;   // bytes of each but the last; 0 when unchunked
};

StreamStaging::StreamStaging(int rank, int size) : rank_(rank), size_(size) {}

StreamStaging::~StreamStaging() {
  // A slot's stream may still be on its way to the flags: leave them (a few words per
  // slot, once per communicator that staged on a stream), as gpu::StreamGate does.
}

Result<StreamStaging::Slot*> StreamStaging::FreeSlot() {
  for (auto& s : slots_)
    if (Load(s->flags + kFree) == s->gen) return s.get();
  if (slots_.size() < kMaxSlots) {
    gpu::Device* d = gpu::ActiveDevice();
    if (d == nullptr) return InvalidArgument(gpu::NoDeviceReason());
    auto slot = std::make_unique<Slot>();
    WEFT_ASSIGN_OR_RETURN(void* flags, d->AllocPinned(kFlagWords * sizeof(uint32_t)));
    slot->flags = static_cast<uint32_t*>(flags);
    // Before the slot's first use is put on a stream (which orders it for the stream).
    for (size_t i = 0; i < kFlagWords; ++i) std::atomic_ref<uint32_t>(slot->flags[i]).store(0);
    slots_.push_back(std::move(slot));
    return slots_.back().get();
  }
  return Unavailable(fmt::format("rank {}: more than {} collectives staged on streams are in "
                                 "flight", rank_, kMaxSlots));
}

Result<std::shared_ptr<StagedCall>> StreamStaging::Enqueue(const Call& call, void* stream) {
  gpu::Device* d = gpu::ActiveDevice();
  if (d == nullptr) return InvalidArgument(gpu::NoDeviceReason());
  const StagingLayout l = StagingLayout::For(call, rank_, size_);
  WEFT_ASSIGN_OR_RETURN(Slot * slot, FreeSlot());
  WEFT_ASSIGN_OR_RETURN(void* p, slot->region.Reserve(std::max<size_t>(l.region_bytes, 64)));
  char* region = static_cast<char*>(p);
  const uint32_t gen = slot->gen + 1;
  auto staged = std::make_shared<StagedCall>();
  staged->host = l.HostCall(call, region);
  staged->flags = slot->flags;
  staged->gen = gen;
  staged->chunk = StagedPipeline::ChunkBytesFor(call, chunk_bytes_);
  const size_t total = call.count * DataTypeSize(call.dtype);
  if (staged->chunk > 0) staged->chunks = (total + staged->chunk - 1) / staged->chunk;
  // Chunk k's bytes [first, first + n) of the input and of the output.
  auto piece = [&](size_t k, size_t whole) -> std::pair<size_t, size_t> {
    if (staged->chunk == 0) return {0, whole};
    const size_t first = k * staged->chunk;
    return {first, std::min(staged->chunk, total - first)};
  };
  for (size_t k = 0; k < staged->chunks; ++k) {
    auto [first, n] = piece(k, l.in_bytes);
    if (l.in_dev)
      WEFT_RETURN_IF_ERROR(d->CopyAsync(region + l.in_offset + first,
                                        static_cast<const char*>(call.send) + first, n, stream));
    WEFT_RETURN_IF_ERROR(d->WriteFlagAsync(slot->flags + Ready(k), gen, stream));
  }
  for (size_t k = 0; k < staged->chunks; ++k) {
    auto [first, n] = piece(k, l.out_bytes);
    WEFT_RETURN_IF_ERROR(d->WaitFlagAsync(slot->flags + Go(k), gen, stream));
    if (l.out_dev)
      WEFT_RETURN_IF_ERROR(d->CopyAsync(static_cast<char*>(call.recv) + first,
                                        region + l.out_offset + first, n, stream));
  }
  WEFT_RETURN_IF_ERROR(d->WriteFlagAsync(slot->flags + kFree, gen, stream));
  slot->gen = gen;  // in use until the stream writes kFree
  return staged;
}

Status StreamStaging::RunHost(StagedCall& s, const Deadline& deadline,
                              const std::atomic<bool>* abort,
                              const std::function<Status(const Call&)>& execute) {
  const size_t es = DataTypeSize(s.host.dtype);
  const size_t total = s.host.count * es;
  Status st;
  for (size_t k = 0; k < s.chunks && st.ok(); ++k) {
    st = WaitReady(s, k, deadline, abort);
    if (!st.ok()) break;
    if (s.chunk == 0) {
      st = execute(s.host);
    } else {
      const size_t first = k * s.chunk;
      Call piece = s.host;
      if (piece.send != nullptr) piece.send = static_cast<const char*>(piece.send) + first;
      if (piece.recv != nullptr) piece.recv = static_cast<char*>(piece.recv) + first;
      piece.count = std::min(s.chunk, total - first) / es;
      st = execute(piece);
      if (!st.ok()) st = st.WithContext(fmt::format("staged chunk {} of {}", k + 1, s.chunks));
    }
    // Release: pairs with the stream's acquire wait (Device::WaitFlagAsync) before it
    // copies the output back; publishes the host collective's output.
    if (st.ok())
      std::atomic_ref<uint32_t>(s.flags[Go(k)]).store(s.gen, std::memory_order_release);
  }
  // Always: on an error the output is undefined and the communicator reports it.
  Release(s);
  return st;
}

Status StreamStaging::WaitReady(const StagedCall& s, size_t k, const Deadline& deadline,
                                const std::atomic<bool>* abort) {
  for (int spins = 0; Load(s.flags + Ready(k)) < s.gen; ++spins) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed))
      return Aborted("the communicator was aborted while the stream had not reached the call");
    if (deadline.expired())
      return DeadlineExceeded(
          "the caller's stream did not reach the operation in time (work queued before it on "
          "the stream is still running)");
    if (spins < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return Status::Ok();
}

void StreamStaging::Release(StagedCall& s) {
  for (size_t k = 0; k < s.chunks; ++k)  // release: as in RunHost
    std::atomic_ref<uint32_t>(s.flags[Go(k)]).store(s.gen, std::memory_order_release);
}

}  // namespace weft::comm
