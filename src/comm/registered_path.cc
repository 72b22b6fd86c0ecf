#include "comm/registered_path.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/log.h"
#include "transport/shm/foreign_shared.h"
#include "transport/shm/shared_buffer.h"

namespace weft::comm {
namespace {

// Numbers of buffers that are not registered with the communicator, so that they never
// equal a registry's (PeerBufferKey tells a peer's buffers apart by this number): a
// weftMemAlloc allocation's own number with the top bit set, a tmpfs file's
// (foreign_shared.h) with the next bit set.
constexpr uint64_t kAllocationBit = uint64_t{1} << 63;
constexpr uint64_t kForeignBit = uint64_t{1} << 62;

// Where [ptr, ptr + bytes) lies in a registration, or else in a buffer from weftMemAlloc
// (which every peer on the host can map just the same: registering it is optional), or
// else, where `files` says to look there, in a tmpfs file the caller mapped shared
// (torch's share_memory_()), if it does.
bool RegionOf(const Registry& registry, const void* ptr, size_t bytes, bool files,
              transport::SharedRegion* out) {
  using transport::shm::Backing;
  auto fill = [out](int fd, Backing backing, uint64_t registration, size_t fd_bytes,
                    size_t offset) {
    *out = transport::SharedRegion{fd, static_cast<uint32_t>(backing), registration, fd_bytes,
                                   offset};
    return true;
  };
  if (ptr == nullptr) return false;
  bytes = bytes == 0 ? 1 : bytes;
  const auto r = registry.Find(ptr, bytes);
  if (r.has_value() && r->kind == MemoryKind::kHostShared && r->fd >= 0) {
    return fill(r->fd, Backing::kSealedMemfd, r->id, r->fd_bytes,
                r->fd_offset + (reinterpret_cast<uintptr_t>(ptr) - r->begin));
  }
  if (transport::shm::SharedRange a; transport::shm::LookUpShared(ptr, bytes, &a))
    return fill(a.fd, Backing::kSealedMemfd, kAllocationBit | a.id, a.alloc_bytes, a.offset);
  if (!files) return false;
  if (auto f = transport::shm::FindForeignShared(ptr, bytes); f.ok())
    return fill(f->fd, Backing::kShmFile, kForeignBit | f->id, f->file_bytes, f->offset);
  return false;
}

}  // namespace

RegisteredPath::RegisteredPath(int rank, int size)
    : rank_(rank), size_(size), pid_(static_cast<int32_t>(getpid())) {
  sched::Round round;
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    round.steps.push_back({sched::StepKind::kSync, p, {}, {}});
    peer_ranks_.push_back(p);
  }
  agreement_.rounds.push_back(std::move(round));
  peers_.input.assign(size, nullptr);
  peers_.output.assign(size, nullptr);
  recent_.resize(size);
}

Result<void*> RegisteredPath::MapRecent(int peer, int32_t pid,
                                        const transport::SharedRegion& region) {
  const transport::shm::PeerBufferKey key{peer, pid, region.registration};
  const auto backing = static_cast<transport::shm::Backing>(region.backing);
  if (backing != transport::shm::Backing::kSealedMemfd &&
      backing != transport::shm::Backing::kShmFile) {
    return ProtocolError(
        fmt::format("rank {} offers a buffer of unknown kind {}", peer, region.backing));
  }
  WEFT_ASSIGN_OR_RETURN(void* base, mapped_.Map(key, region.fd, region.fd_bytes, backing));
  auto& recent = recent_[peer];
  auto it = std::find_if(recent.begin(), recent.end(), [&](const auto& k) {
    return k.pid == key.pid && k.registration == key.registration;
  });
  if (it != recent.end()) recent.erase(it);
  recent.insert(recent.begin(), key);
  if (recent.size() > kKeepPerPeer) {
    mapped_.Release(recent.back());
    recent.pop_back();
  }
  return base;
}

// The call's largest buffer on any rank, in bytes: the same on every rank.
size_t RegisteredPath::LargestBytes(const Call& call, int size) {
  sched::CollectiveSpec spec{call.coll, call.root, size, call.root, call.count};
  return std::max(sched::InputCount(spec), sched::OutputCount(spec)) * DataTypeSize(call.dtype);
}

bool RegisteredPath::Considers(const Call& call, uint16_t kind, transport::Mesh& mesh) const {
  if (kind != 0 || call.kind != CallKind::kCollective || size_ < 2) return false;
  switch (call.coll) {
    case sched::Collective::kAllReduce:
    case sched::Collective::kReduce:
    case sched::Collective::kBroadcast:
    case sched::Collective::kAllGather:
    case sched::Collective::kReduceScatter:
    case sched::Collective::kGather:
    case sched::Collective::kScatter:
    case sched::Collective::kAllToAll:
      break;
    default:
      return false;  // the barrier moves no data
  }
  if (LargestBytes(call, size_) < kMinBytes) return false;
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && !mesh.link(p)->HasFlags()) return false;
  return true;
}

Result<bool> RegisteredPath::Agree(const Call& call, const Registry& registry,
                                   transport::Mesh& mesh, exec::Executor& executor,
                                   const exec::ExecContext& ctx) {
  // Each rank's buffer sizes, and whether its schedule uses them (a non-root's broadcast
  // input, say, may be NULL): only those are offered, checked and mapped.
  auto bytes_of = [&](int rank, bool input) {
    sched::CollectiveSpec spec{call.coll, rank, size_, call.root, call.count};
    return (input ? sched::InputCount(spec) : sched::OutputCount(spec)) *
           DataTypeSize(call.dtype);
  };
  // The flags this rank left untaken at its last agreement: the peers raised them on
  // entering that call, so they are there or come soon. Taking them first keeps the
  // flags matched in order, and shows that each peer is done reading the offer slot
  // written below (Link::SetOffer).
  if (owed_) {
    WEFT_RETURN_IF_ERROR(executor.TakeFlags(peer_ranks_, ctx));
    owed_ = false;
  }
  const uint64_t agreement = agreements_++;
  transport::BufferOffer mine;
  mine.pid = pid_;
  const bool files = LargestBytes(call, size_) >= kFileMinBytes;
  const bool input_ok = !UsesInput(call, rank_) ||
                        RegionOf(registry, call.send, bytes_of(rank_, true), files, &mine.input);
  const bool output_ok = !UsesOutput(call, rank_) || RegionOf(registry, call.recv,
                                                              bytes_of(rank_, false), files,
                                                              &mine.output);
  mine.registered = input_ok && output_ok;
  // Only all-to-all's single pass cares (sched::CollectiveSpec::may_be_in_place).
  if (call.send != nullptr && call.recv != nullptr) {
    const auto in = reinterpret_cast<uintptr_t>(call.send);
    const auto out = reinterpret_cast<uintptr_t>(call.recv);
    mine.in_place = in < out + bytes_of(rank_, false) && out < in + bytes_of(rank_, true);
  }
  // Plain data in the shared segment: published by the flag raised below (release,
  // ShmLink::RaiseFlag) and read after taking the peer's (acquire).
  for (int p : peer_ranks_) mesh.link(p)->SetOffer(agreement, mine);
  if (!mine.registered) {
    // The call is plain whatever the peers offer: say so and go on without waiting for
    // them. The peers that wait read this offer and fall back too.
    for (int p : peer_ranks_) mesh.link(p)->RaiseFlag();
    owed_ = true;
    return false;
  }
  WEFT_RETURN_IF_ERROR(executor.Run(agreement_, ctx, {}));

  std::vector<transport::BufferOffer> offers(size_);
  std::string plain;
  may_be_in_place_ = false;
  for (int p = 0; p < size_; ++p) {
    offers[p] = p == rank_ ? mine : mesh.link(p)->PeerOffer(agreement);
    if (!offers[p].registered) plain += fmt::format("{}{}", plain.empty() ? "" : ",", p);
    may_be_in_place_ |= offers[p].in_place != 0;
  }
  if (!plain.empty()) {
    if (mine.registered && plain != last_logged_) {
      WEFT_INFO("rank {}: {} seq {}: buffers registered here but not on rank(s) {}: the call "
                "runs the plain path on every rank",
                rank_, ctx.what, ctx.seq, plain);
      last_logged_ = plain;
    }
    return false;
  }
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const transport::BufferOffer& o = offers[p];
    const transport::SharedRegion* regions[2] = {&o.input, &o.output};
    const bool used[2] = {UsesInput(call, p), UsesOutput(call, p)};
    char** slots[2] = {&peers_.input[p], &peers_.output[p]};
    for (int i = 0; i < 2; ++i) {
      *slots[i] = nullptr;
      if (!used[i]) continue;
      const transport::SharedRegion& r = *regions[i];
      const size_t bytes = bytes_of(p, i == 0);
      if (r.offset + bytes > r.fd_bytes) {
        return ProtocolError(fmt::format(
            "rank {}: rank {} offers a buffer of {} bytes at offset {} of a {}-byte memfd",
            rank_, p, bytes, r.offset, r.fd_bytes));
      }
      auto base = MapRecent(p, o.pid, r);
      if (!base.ok()) {
        return base.status().WithContext(
            fmt::format("rank {}: {} seq {} on registered buffers", rank_, ctx.what, ctx.seq));
      }
      *slots[i] = static_cast<char*>(base.value()) + r.offset;
    }
  }
  last_logged_.clear();
  return true;
}

}  // namespace weft::comm
