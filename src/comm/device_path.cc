#include "comm/device_path.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/env.h"
#include "core/log.h"
#include "gpu/runtime.h"
#include "sched/schedule.h"

namespace weft::comm {

using sched::Collective;

// What one rank tells the others about its buffers for one call. Plain bytes.
struct DevicePath::Card {
  uint32_t magic = kMagic;
  int32_t pid = 0;
  char bus_id[32] = {};
  uint64_t in_ptr = 0, out_ptr = 0;  // raw, for peers in this same process
  uint8_t shareable = 0;             // every buffer this rank uses is null or exported
  uint8_t pad[7] = {};
  gpu::IpcRef in_ref, out_ref;
  static constexpr uint32_t kMagic = 0x31477765;  // "weG1"
};

namespace {

// Slice `r` of `count` elements split `n` ways, each boundary on a 16-byte multiple so
// the kernel stays vectorised: [begin, end).
std::pair<size_t, size_t> SliceOf(size_t count, int n, int r, size_t esize) {
  const size_t pack = std::max<size_t>(1, 16 / esize);
  size_t per = (count + n - 1) / n;
  per = (per + pack - 1) / pack * pack;
  size_t b = std::min(count, per * r);
  size_t e = std::min(count, b + per);
  return {b, e};
}

// Allreduce below this (and not in place) reduces every peer's whole input in one
// kernel per rank and skips the allgather phase: fewer host rounds, more reads.
constexpr size_t kOneShotMaxBytes = 256 * 1024;

// Staged calls of at least two of these go in overlapping chunks (comm/staged_pipeline.h).
// 4 MiB keeps a chunk's host collective past its fixed costs (tens of microseconds) while a
// 64 MiB call still has 16 chunks to overlap.
constexpr long long kStageChunkBytes = 4 << 20;

}  // namespace

Result<std::unique_ptr<DevicePath>> DevicePath::Create(int device, Host host) {
  std::unique_ptr<DevicePath> p(new DevicePath(device, std::move(host)));
  p->mode_ = GetEnv("WEFT_CUDA_PATH").value_or("auto");
  if (p->mode_ != "auto" && p->mode_ != "direct" && p->mode_ != "staged")
    return InvalidArgument(
        fmt::format("WEFT_CUDA_PATH='{}': expected auto, direct or staged", p->mode_));
  WEFT_ASSIGN_OR_RETURN(long long chunk, GetEnvInt("WEFT_CUDA_STAGE_CHUNK", kStageChunkBytes));
  if (chunk < 0 || (chunk > 0 && chunk < 4096))
    return InvalidArgument(fmt::format(
        "WEFT_CUDA_STAGE_CHUNK={}: expected 0 (unchunked) or at least 4096 bytes", chunk));
  p->stage_chunk_bytes_ = static_cast<size_t>(chunk);
  p->staging_.set_chunk_bytes(p->stage_chunk_bytes_);
  // Created on `device`, leaving the caller's current device as it was.
  const int previous = gpu::CurrentDevice();
  WEFT_RETURN_IF_ERROR(gpu::SetDevice(device));
  auto gate = gpu::StreamGate::Create();
  auto stream = gpu::CreateStream();
  if (previous >= 0 && previous != device) (void)gpu::SetDevice(previous);
  if (!gate.ok()) return gate.status();
  if (!stream.ok()) return stream.status();
  p->gate_ = std::move(gate).value();
  p->stream_ = stream.value();
  WEFT_INFO("rank {}: device buffers on CUDA device {} ({}); the caller's stream waits by {}",
            p->host_.rank, device, gpu::PciBusId(device), p->gate_->mechanism());
  return p;
}

DevicePath::DevicePath(int device, Host host)
    : device_(device), host_(std::move(host)), staging_(host_.rank, host_.size) {}

DevicePath::~DevicePath() { gpu::DestroyStream(stream_); }

Status DevicePath::CopyToHost(void* host, const void* src, size_t bytes,
                              const Deadline& deadline) {
  WEFT_RETURN_IF_ERROR(gpu::CopyAsync(host, src, bytes, stream_));
  return gpu::SyncStream(stream_, deadline);
}

Status DevicePath::CopyFromHost(void* dst, const void* host, size_t bytes,
                                const Deadline& deadline) {
  WEFT_RETURN_IF_ERROR(gpu::CopyAsync(dst, host, bytes, stream_));
  return gpu::SyncStream(stream_, deadline);
}

Status DevicePath::RunCollective(const Call& call, uint64_t seq, const Deadline& deadline) {
  WEFT_RETURN_IF_ERROR(gpu::SetDevice(device_));
  const int me = host_.rank;
  // Several hosts: staged, known on every rank alike without exchanging cards.
  if (mode_ == "staged" || call.coll == Collective::kBarrier || !host_.single_host) {
    last_path_ = "staged";
    return RunStaged(call, seq, deadline);
  }

  sched::CollectiveSpec spec{call.coll, me, host_.size, call.root, call.count};
  const size_t esize = DataTypeSize(call.dtype);
  const size_t in_bytes = sched::InputCount(spec) * esize;

  // 1. Describe this rank's buffers.
  Card mine;
  mine.pid = static_cast<int32_t>(getpid());
  std::string bus = gpu::PciBusId(device_);
  std::snprintf(mine.bus_id, sizeof(mine.bus_id), "%s", bus.c_str());
  const void* in = UsesInput(call, me) ? call.send : nullptr;
  void* out = UsesOutput(call, me) ? call.recv : nullptr;
  bool shareable = true;
  // An in-place alltoall would overwrite blocks its peers are still reading: share a
  // copy of the input instead.
  if (call.coll == Collective::kAllToAll && in != nullptr && in == out && in_bytes > 0 &&
      gpu::Classify(in).device) {
    WEFT_ASSIGN_OR_RETURN(void* copy, scratch_.Reserve(in_bytes));
    WEFT_RETURN_IF_ERROR(gpu::CopyAsync(copy, in, in_bytes, stream_));
    WEFT_RETURN_IF_ERROR(gpu::SyncStream(stream_, deadline));
    in = copy;
  }
  auto share = [&](const void* p, gpu::IpcRef* ref) {
    if (p == nullptr) return;
    gpu::PointerInfo info = gpu::Classify(p);
    if (!info.device || info.device_id != device_) {
      shareable = false;
      return;
    }
    auto r = gpu::ExportIpc(p);
    if (!r.ok()) {
      WEFT_TRACE("rank {}: {}; staging through the host", me, r.status().message());
      shareable = false;
      return;
    }
    *ref = r.value();
  };
  share(in, &mine.in_ref);
  share(out, &mine.out_ref);
  mine.in_ptr = reinterpret_cast<uint64_t>(in);
  mine.out_ptr = reinterpret_cast<uint64_t>(out);
  mine.shareable = shareable ? 1 : 0;

  // 2. Everyone learns everyone's; this also tells each rank that all inputs are ready.
  std::vector<Card> cards(host_.size);
  WEFT_RETURN_IF_ERROR(host_.allgather(&mine, sizeof(Card), cards.data(), seq)
                           .WithContext("exchanging device buffer handles"));
  bool all_shareable = true;
  for (int r = 0; r < host_.size; ++r) {
    if (cards[r].magic != Card::kMagic)
      return ProtocolError(fmt::format("rank {}: bad device card from rank {}", me, r));
    all_shareable = all_shareable && cards[r].shareable;
  }
  WEFT_ASSIGN_OR_RETURN(bool capable, DirectCapable(cards, seq));
  if (capable && all_shareable) {
    last_path_ = "direct";
    return RunDirect(call, cards, seq, deadline);
  }
  if (mode_ == "direct")
    return InvalidArgument(fmt::format(
        "rank {}: WEFT_CUDA_PATH=direct but {}", me,
        capable ? "some rank's buffers cannot be shared by CUDA IPC (host memory, another "
                  "device, or not from cudaMalloc)"
                : "the ranks' devices cannot all reach each other (several hosts, or no "
                  "peer access)"));
  last_path_ = "staged";
  return RunStaged(call, seq, deadline);
}

Result<bool> DevicePath::DirectCapable(const std::vector<Card>& cards, uint64_t seq) {
  if (direct_capable_) return *direct_capable_;
  // Every rank judges whether it can reach every peer's device; all must agree, so the
  // verdicts are exchanged once (the same round on every rank: the first device call).
  uint8_t ok = host_.single_host ? 1 : 0;
  for (int r = 0; r < host_.size && ok; ++r)
    if (!gpu::CanAccess(std::string(cards[r].bus_id, strnlen(cards[r].bus_id, 32)))) ok = 0;
  std::vector<uint8_t> all(host_.size);
  WEFT_RETURN_IF_ERROR(host_.allgather(&ok, 1, all.data(), seq)
                           .WithContext("agreeing on direct device access"));
  direct_capable_ = std::all_of(all.begin(), all.end(), [](uint8_t v) { return v == 1; });
  WEFT_INFO("rank {}: device collectives {} (single host: {})", host_.rank,
            *direct_capable_ ? "read peers' buffers directly (CUDA IPC)"
                             : "are staged through host memory",
            host_.single_host);
  return *direct_capable_;
}

Result<void*> DevicePath::PeerPtr(const Card& card, bool input) {
  uint64_t raw = input ? card.in_ptr : card.out_ptr;
  if (raw == 0) return static_cast<void*>(nullptr);
  if (card.pid == static_cast<int32_t>(getpid())) return reinterpret_cast<void*>(raw);
  return ipc_.Open(input ? card.in_ref : card.out_ref);
}

Status DevicePath::RunDirect(const Call& call, const std::vector<Card>& cards, uint64_t seq,
                             const Deadline& deadline) {
  const int n = host_.size, me = host_.rank;
  const size_t es = DataTypeSize(call.dtype);
  const size_t count = call.count;
  std::vector<const char*> in(n);
  std::vector<char*> out(n);
  for (int r = 0; r < n; ++r) {
    WEFT_ASSIGN_OR_RETURN(void* i, PeerPtr(cards[r], true));
    WEFT_ASSIGN_OR_RETURN(void* o, PeerPtr(cards[r], false));
    in[r] = static_cast<const char*>(i);
    out[r] = static_cast<char*>(o);
  }
  const int divisor = call.op == RedOp::kAvg ? n : 1;
  std::vector<const void*> srcs(n);
  auto reduce_slice = [&](char* dst, size_t first_elem, size_t elems, size_t in_offset_elems) {
    for (int r = 0; r < n; ++r) srcs[r] = in[r] + (in_offset_elems + first_elem) * es;
    return gpu::ReduceAsync(dst, srcs.data(), n, elems, call.dtype, call.op, divisor, stream_);
  };
  auto finish_phase = [&]() -> Status {
    WEFT_RETURN_IF_ERROR(gpu::SyncStream(stream_, deadline));
    return host_.barrier(seq);
  };

  switch (call.coll) {
    case Collective::kAllReduce: {
      const bool in_place = in[me] == out[me];
      if (!in_place && count * es <= kOneShotMaxBytes) {
        WEFT_RETURN_IF_ERROR(reduce_slice(out[me], 0, count, 0));
        return finish_phase();
      }
      auto [b, e] = SliceOf(count, n, me, es);
      WEFT_RETURN_IF_ERROR(reduce_slice(out[me] + b * es, b, e - b, 0));
      WEFT_RETURN_IF_ERROR(finish_phase());
      for (int j = 0; j < n; ++j) {
        if (j == me) continue;
        auto [bj, ej] = SliceOf(count, n, j, es);
        WEFT_RETURN_IF_ERROR(
            gpu::CopyAsync(out[me] + bj * es, out[j] + bj * es, (ej - bj) * es, stream_));
      }
      return finish_phase();
    }
    case Collective::kReduce: {
      // Every rank reduces one slice straight into the root's output.
      auto [b, e] = SliceOf(count, n, me, es);
      WEFT_RETURN_IF_ERROR(reduce_slice(out[call.root] + b * es, b, e - b, 0));
      return finish_phase();
    }
    case Collective::kReduceScatter:
      WEFT_RETURN_IF_ERROR(reduce_slice(out[me], 0, count, static_cast<size_t>(me) * count));
      return finish_phase();
    case Collective::kBroadcast:
      WEFT_RETURN_IF_ERROR(gpu::CopyAsync(out[me], in[call.root], count * es, stream_));
      return finish_phase();
    case Collective::kAllGather:
      for (int j = 0; j < n; ++j)
        WEFT_RETURN_IF_ERROR(gpu::CopyAsync(out[me] + j * count * es, in[j], count * es, stream_));
      return finish_phase();
    case Collective::kAllToAll:
      for (int j = 0; j < n; ++j)
        WEFT_RETURN_IF_ERROR(gpu::CopyAsync(out[me] + j * count * es, in[j] + me * count * es,
                                            count * es, stream_));
      return finish_phase();
    case Collective::kGather:
      if (me == call.root)
        for (int j = 0; j < n; ++j)
          WEFT_RETURN_IF_ERROR(
              gpu::CopyAsync(out[me] + j * count * es, in[j], count * es, stream_));
      return finish_phase();
    case Collective::kScatter:
      WEFT_RETURN_IF_ERROR(
          gpu::CopyAsync(out[me], in[call.root] + me * count * es, count * es, stream_));
      return finish_phase();
    case Collective::kBarrier:
      return host_.barrier(seq);
  }
  return Internal("unknown collective on device buffers");
}

Status DevicePath::RunStaged(const Call& call, uint64_t seq, const Deadline& deadline) {
  const StagingLayout l = StagingLayout::For(call, host_.rank, host_.size);
  char* region = nullptr;
  if (l.in_dev || l.out_dev) {
    WEFT_ASSIGN_OR_RETURN(void* p, staged_.Reserve(std::max<size_t>(l.region_bytes, 64)));
    region = static_cast<char*>(p);
  }
  auto execute = [&](const Call& c) { return host_.execute(c, seq); };
  if (const size_t chunk = StagedPipeline::ChunkBytesFor(call, stage_chunk_bytes_); chunk > 0)
    return pipeline_.Run(call, l, region, chunk, deadline, execute);
  if (l.in_dev) {
    WEFT_RETURN_IF_ERROR(gpu::CopyAsync(region + l.in_offset, call.send, l.in_bytes, stream_));
    WEFT_RETURN_IF_ERROR(gpu::SyncStream(stream_, deadline));
  }
  WEFT_RETURN_IF_ERROR(host_.execute(l.HostCall(call, region), seq));
  if (l.out_dev) {
    WEFT_RETURN_IF_ERROR(gpu::CopyAsync(call.recv, region + l.out_offset, l.out_bytes, stream_));
    WEFT_RETURN_IF_ERROR(gpu::SyncStream(stream_, deadline));
  }
  return Status::Ok();
}

}  // namespace weft::comm
