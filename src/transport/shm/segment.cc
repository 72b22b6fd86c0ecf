#include "transport/shm/segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <new>
#include <thread>

#include "core/env.h"
#include "core/log.h"
#include "core/tsan_sync.h"
#include "transport/shm/cma.h"

namespace weft::transport::shm {
namespace {

// SideInfo::attached: 0 free, then kClaimed (by one compare-and-swap) while the opener
// fills its fields, then kAttached once they are published.
constexpr uint32_t kClaimed = 2;
constexpr uint32_t kAttached = 1;

constexpr size_t kPage = 4096;

size_t DataOffset() { return (sizeof(SegmentHeader) + kPage - 1) / kPage * kPage; }
size_t TotalBytes(uint64_t ring_bytes) { return DataOffset() + 2 * ring_bytes; }
bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Closes a descriptor on scope exit (segment fds are only needed until mmap).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

// Short sleeps while waiting for the peer process: it is usually a few microseconds to
// milliseconds behind, so start small and cap low to keep setup latency down.
class Backoff {
 public:
  void Sleep() {
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = std::min(us_ * 2, 10000);
  }

 private:
  int us_ = 100;
};

// Maps a segment and waits (up to `wait`) for its creator to publish the magic.
// Returns nullptr header when it is not (yet) initialised.
struct Mapping {
  void* base = MAP_FAILED;
  size_t bytes = 0;
  SegmentHeader* header() const { return static_cast<SegmentHeader*>(base); }
  bool ok() const { return base != MAP_FAILED; }
  void Unmap() {
    if (ok()) munmap(base, bytes);
    base = MAP_FAILED;
  }
};

Result<Mapping> MapFd(int fd, const std::string& name) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus("fstat " + name, errno);
  Mapping m;
  if (static_cast<size_t>(st.st_size) < DataOffset()) return m;  // not sized yet
  m.bytes = static_cast<size_t>(st.st_size);
  m.base = mmap(nullptr, m.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m.base == MAP_FAILED) return ErrnoStatus("mmap " + name, errno);
  return m;
}

bool CreatorIsDead(const SegmentHeader* h) {
  const SideInfo& c = h->side[0];
  // The caller loaded the magic with acquire: pid_ns and pid are the creator's.
  if (c.pid_ns != PidNamespace()) return false;  // cannot tell: assume alive
  return ProcessIsDead(c.pid.load(std::memory_order_acquire));
}

// An existing segment of our name blocks O_EXCL creation. It is stale (left by a crashed
// run whose creator died before unlinking) if its creator is dead or it never got
// initialised; then it is safe to unlink. A live creator means another communicator uses
// the same comm_id on this host: that is an error, not something to break.
Status RemoveIfStale(const std::string& name, int self, int peer) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();  // vanished meanwhile: retry creation
    return ErrnoStatus(fmt::format("rank {}: shm_open existing {}", self, name), errno);
  }
  FdCloser closer{fd};
  // A creator that is alive but has not finished initialising needs only milliseconds;
  // one second is ample before calling the segment stale.
  Deadline wait = Deadline::AfterSeconds(1.0);
  Backoff backoff;
  while (true) {
    WEFT_ASSIGN_OR_RETURN(Mapping m, MapFd(fd, name));
    // Acquire: pairs with the release of the magic in Create (the header is filled in).
    if (m.ok() && m.header()->magic.load(std::memory_order_acquire) == kSegmentMagic) {
      bool dead = CreatorIsDead(m.header());
      int pid = m.header()->side[0].pid.load();
      m.Unmap();
      if (!dead) {
        return InvalidUsage(fmt::format(
            "rank {}: shared memory segment {} for rank {} already exists and its creator "
            "(pid {}) is alive: two communicators on this host use the same comm_id, or "
            "two processes claim the same rank",
            self, name, peer, pid));
      }
      WEFT_WARN("rank {}: removing stale shared memory segment {} (creator pid {} is dead)", self,
                name, pid);
      break;
    }
    m.Unmap();
    if (wait.expired()) {
      WEFT_WARN("rank {}: removing uninitialised shared memory segment {}", self, name);
      break;
    }
    backoff.Sleep();
  }
  if (shm_unlink(name.c_str()) != 0 && errno != ENOENT)
    return ErrnoStatus(fmt::format("rank {}: shm_unlink stale {}", self, name), errno);
  return Status::Ok();
}

}  // namespace

uint64_t PidNamespace() {
  // A process cannot change its own pid namespace, so read it once.
  static const uint64_t ns = [] {
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
  }();
  return ns;
}

bool ProcessIsDead(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0) return errno == ESRCH;
  // A killed process whose parent has not reaped it yet still answers kill(): read its
  // state from /proc ("pid (comm) S ..."; comm may contain spaces and parentheses).
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return true;  // vanished between kill() and open
  size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= line.size()) return false;
  char state = line[close_paren + 2];
  return state == 'Z' || state == 'X';
}

Result<uint64_t> RingBytesFromEnv() {
  WEFT_ASSIGN_OR_RETURN(
      long long v, GetEnvInt("WEFT_SHM_RING_BYTES", static_cast<long long>(kDefaultRingBytes)));
  if (v < 4096 || v > (1ll << 30) || !IsPowerOfTwo(static_cast<uint64_t>(v))) {
    return InvalidArgument(fmt::format(
        "WEFT_SHM_RING_BYTES={} must be a power of two between 4096 and 1073741824", v));
  }
  return static_cast<uint64_t>(v);
}

Result<uint64_t> RewindBytesFromEnv() {
  WEFT_ASSIGN_OR_RETURN(long long v, GetEnvInt("WEFT_SHM_REWIND_BYTES",
                                               static_cast<long long>(kDefaultRewindBytes)));
  if (v < 0) {
    return InvalidArgument(fmt::format(
        "WEFT_SHM_REWIND_BYTES={} must be a byte count (0 turns rewinding off)", v));
  }
  return static_cast<uint64_t>(v);
}

Result<bool> WakeFromEnv() {
  WEFT_ASSIGN_OR_RETURN(long long v, GetEnvInt("WEFT_SHM_WAKE", 1));
  if (v != 0 && v != 1)
    return InvalidArgument(fmt::format("WEFT_SHM_WAKE={} must be 0 or 1", v));
  return v == 1;
}

std::string Segment::Name(uint64_t comm_id, int lo, int hi) {
  return fmt::format("/weft-u{}-{:016x}-{}-{}", getuid(), comm_id, lo, hi);
}

Segment::Segment(std::string name, int side, void* base, size_t bytes)
    : name_(std::move(name)),
      side_(side),
      base_(base),
      bytes_(bytes),
      header_(static_cast<SegmentHeader*>(base)) {
  // A child forked later (a data-loader worker, a launcher helper) must not inherit the
  // mapping: a stray use there (say, this destructor marking the link closed) would
  // silently break the parent's link; without the mapping it faults visibly instead.
  madvise(base_, bytes_, MADV_DONTFORK);
}

Segment::~Segment() {
  // Release so that every byte this side wrote is visible before the peer sees closed
  // (pairs with the acquire in ShmLink::PeerClosedError/CheckPeer).
  header_->side[side_].closed.store(1, std::memory_order_release);
  munmap(base_, bytes_);
  if (side_ == 0 && !unlinked_) shm_unlink(name_.c_str());
}

Ring Segment::MakeRing(int writer) const {
  uint8_t* data = static_cast<uint8_t*>(base_) + DataOffset() + writer * header_->ring_bytes;
  // Both ends name the segment alike, so TSan sees one channel per direction.
  return Ring(&header_->ring[writer], data, header_->ring_bytes,
              TsanSyncKey(fmt::format("{}/{}", name_, writer)));
}

Result<std::unique_ptr<Segment>> Segment::Create(uint64_t comm_id, int self, int peer,
                                                 uint64_t ring_bytes, uint64_t cma_threshold) {
  if (!IsPowerOfTwo(ring_bytes)) return Internal("shm ring size must be a power of two");
  std::string name = Name(comm_id, self, peer);
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) break;
    if (errno != EEXIST || attempt == 2) {
      return ErrnoStatus(fmt::format("rank {}: shm_open {} for rank {}", self, name, peer), errno);
    }
    WEFT_RETURN_IF_ERROR(RemoveIfStale(name, self, peer));
  }
  FdCloser closer{fd};
  size_t total = TotalBytes(ring_bytes);
  // Reserve the pages now: on a full /dev/shm a plain ftruncate would succeed and the
  // first touch of a page would later kill the process with SIGBUS.
  int rc;
  do {
    rc = posix_fallocate(fd, 0, static_cast<off_t>(total));
  } while (rc == EINTR);
  if (rc != 0) {
    shm_unlink(name.c_str());
    Status s =
        ErrnoStatus(fmt::format("rank {}: reserving {} bytes of shared memory for rank {} ({})",
                                self, total, peer, name),
                    rc);
    if (rc == ENOSPC)
      return s.WithContext("/dev/shm is full; enlarge it or lower WEFT_SHM_RING_BYTES");
    return s;
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    shm_unlink(name.c_str());
    return ErrnoStatus(fmt::format("rank {}: mmap {}", self, name), err);
  }
  auto* h = new (base) SegmentHeader();
  h->version = kSegmentVersion;
  h->ranks[0] = self;
  h->ranks[1] = peer;
  h->comm_id = comm_id;
  h->ring_bytes = ring_bytes;
  h->cma_threshold = cma_threshold;
  h->side[0].pid.store(getpid());
  h->side[0].pid_ns = PidNamespace();
  h->side[0].probe_addr = CmaProbeAddress();
  h->side[0].attached.store(kAttached);
  // Release: pairs with the acquire in Open/RemoveIfStale; publishes the header above.
  h->magic.store(kSegmentMagic, std::memory_order_release);
  return std::unique_ptr<Segment>(new Segment(std::move(name), 0, base, total));
}

Result<std::unique_ptr<Segment>> Segment::Open(uint64_t comm_id, int self, int peer,
                                               const Deadline& deadline) {
  std::string name = Name(comm_id, peer, self);
  std::string waiting_for = "it to be created";
  Backoff backoff;
  while (true) {
    int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != ENOENT)
      return ErrnoStatus(fmt::format("rank {}: shm_open {} from rank {}", self, name, peer), errno);
    if (fd >= 0) {
      FdCloser closer{fd};
      WEFT_ASSIGN_OR_RETURN(Mapping m, MapFd(fd, name));
      SegmentHeader* h = m.ok() ? m.header() : nullptr;
      // Acquire: pairs with the release of the magic in Create (version, ranks, side 0).
      if (h == nullptr || h->magic.load(std::memory_order_acquire) != kSegmentMagic) {
        waiting_for = "its creator to initialise it";
      } else if (h->version != kSegmentVersion || h->comm_id != comm_id || h->ranks[0] != peer ||
                 h->ranks[1] != self || !IsPowerOfTwo(h->ring_bytes) ||
                 m.bytes != TotalBytes(h->ring_bytes)) {
        Status s = ProtocolError(fmt::format(
            "rank {}: shared memory segment {} from rank {} is not ours (version {}, comm "
            "{:#x}, ranks {}-{}, {} bytes)",
            self, name, peer, h->version, h->comm_id, h->ranks[0], h->ranks[1], m.bytes));
        m.Unmap();
        return s;
      } else if (CreatorIsDead(h)) {
        // Left by a crashed earlier run; the live creator will replace it.
        waiting_for = fmt::format("rank {} to replace a stale segment (creator pid {} is dead)",
                                  peer, h->side[0].pid.load());
      } else if (uint32_t free_side = 0; !h->side[1].attached.compare_exchange_strong(
                     free_side, kClaimed, std::memory_order_acq_rel)) {
        // Claimed by one compare-and-swap, so of two processes that both say they are
        // rank `self` only one attaches; the other waits here and then times out.
        waiting_for =
            fmt::format("a segment already attached by pid {} (two processes claim rank {}?)",
                        h->side[1].pid.load(), self);
      } else {
        h->side[1].pid.store(getpid());
        h->side[1].pid_ns = PidNamespace();
        h->side[1].probe_addr = CmaProbeAddress();
        // Release: pairs with the acquire in WaitPeerAttached; publishes the three above.
        h->side[1].attached.store(kAttached, std::memory_order_release);
        // Both sides are mapped now, so the name is no longer needed. The creator unlinks
        // too (whichever is first wins); doing it here as well means nothing leaks if the
        // creator dies before its unlink.
        shm_unlink(name.c_str());
        return std::unique_ptr<Segment>(new Segment(std::move(name), 1, m.base, m.bytes));
      }
      m.Unmap();
    }
    if (deadline.expired()) {
      return DeadlineExceeded(fmt::format(
          "rank {}: timed out opening shared memory segment {} from rank {}: waiting for {}", self,
          name, peer, waiting_for));
    }
    backoff.Sleep();
  }
}

Status Segment::WaitPeerAttached(const Deadline& deadline) {
  Backoff backoff;
  // Acquire: pairs with the release in Open (the opener's pid, pid_ns, probe_addr).
  while (header_->side[1].attached.load(std::memory_order_acquire) != kAttached) {
    if (deadline.expired()) {
      return DeadlineExceeded(
          fmt::format("rank {}: timed out waiting for rank {} to attach shared memory segment {}",
                      header_->ranks[0], header_->ranks[1], name_));
    }
    backoff.Sleep();
  }
  shm_unlink(name_.c_str());  // ENOENT when the opener unlinked first: fine
  unlinked_ = true;
  return Status::Ok();
}

}  // namespace weft::transport::shm
