#include "transport/shm/shared_buffer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "core/mutex.h"

namespace weft::transport::shm {
namespace {

constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

struct Allocation {
  uint64_t id;
  int fd;
  size_t bytes;  // page-rounded mapping size
};

class AllocationTable {
 public:
  void Add(void* base, int fd, size_t bytes) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    by_base_[reinterpret_cast<uintptr_t>(base)] = Allocation{next_id_++, fd, bytes};
  }
  // Removes and returns the allocation starting exactly at `base`.
  Result<Allocation> Take(void* base) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = by_base_.find(reinterpret_cast<uintptr_t>(base));
    if (it == by_base_.end()) {
      return InvalidArgument(fmt::format(
          "weftMemFree: {} was not returned by weftMemAlloc, or was already freed", base));
    }
    Allocation a = it->second;
    by_base_.erase(it);
    return a;
  }
  // Without a message: comm::RegisteredPath asks it of plain buffers on every call.
  bool LookUp(const void* ptr, size_t bytes, SharedRange* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    auto it = Holding(p);
    if (it == by_base_.end() || bytes > it->first + it->second.bytes - p) return false;
    *out = RangeAt(*it, p);
    return true;
  }
  Result<SharedRange> Find(const void* ptr, size_t bytes) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    auto it = Holding(p);
    if (it == by_base_.end()) return NotShared(ptr);
    if (bytes > it->first + it->second.bytes - p) {
      return InvalidArgument(fmt::format(
          "{} bytes at {} run past the end of their weftMemAlloc buffer ({} bytes at {:#x})",
          bytes, ptr, it->second.bytes, it->first));
    }
    return RangeAt(*it, p);
  }
  size_t Count() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return by_base_.size();
  }

 private:
  using Entry = std::map<uintptr_t, Allocation>::value_type;
  // The allocation holding address p, or by_base_.end().
  std::map<uintptr_t, Allocation>::const_iterator Holding(uintptr_t p) const REQUIRES(mu_) {
    auto it = by_base_.upper_bound(p);
    if (it == by_base_.begin()) return by_base_.end();
    --it;
    return p < it->first + it->second.bytes ? it : by_base_.end();
  }
  static SharedRange RangeAt(const Entry& e, uintptr_t p) {
    return SharedRange{e.second.id, e.second.fd, reinterpret_cast<void*>(e.first),
                       e.second.bytes, p - e.first};
  }
  static Status NotShared(const void* ptr) {
    return InvalidArgument(fmt::format("{} is not in a buffer from weftMemAlloc", ptr));
  }
  Mutex mu_;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<uintptr_t, Allocation> by_base_ GUARDED_BY(mu_);
};

AllocationTable& Table() {
  static AllocationTable* table = new AllocationTable;  // never destroyed: used at exit
  return *table;
}

size_t PageRound(size_t bytes) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

Result<void*> SharedAlloc(size_t bytes) {
  if (bytes == 0) return InvalidArgument("weftMemAlloc: size is 0");
  size_t mapped = PageRound(bytes);
  if (mapped < bytes) return InvalidArgument(fmt::format("weftMemAlloc: size {} too large", bytes));
  int fd = memfd_create("weft-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return ErrnoStatus("weftMemAlloc: memfd_create", errno);
  // memfds are created 0777 on some kernels; only this uid may ever open it.
  Status st = Status::Ok();
  if (fchmod(fd, 0600) != 0) st = ErrnoStatus("weftMemAlloc: fchmod 0600", errno);
  if (st.ok() && ftruncate(fd, static_cast<off_t>(mapped)) != 0)
    st = ErrnoStatus(fmt::format("weftMemAlloc: ftruncate {} bytes", mapped), errno);
  if (st.ok() && fcntl(fd, F_ADD_SEALS, kSeals) != 0)
    st = ErrnoStatus("weftMemAlloc: F_ADD_SEALS", errno);
  void* base = MAP_FAILED;
  if (st.ok()) {
    base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) st = ErrnoStatus(fmt::format("weftMemAlloc: mmap {} bytes", mapped), errno);
  }
  if (!st.ok()) {
    close(fd);
    return st;
  }
  Table().Add(base, fd, mapped);
  return base;
}

Status SharedFree(void* ptr) {
  if (ptr == nullptr) return InvalidArgument("weftMemFree: pointer is NULL");
  WEFT_ASSIGN_OR_RETURN(Allocation a, Table().Take(ptr));
  munmap(ptr, a.bytes);
  close(a.fd);
  return Status::Ok();
}

Result<SharedRange> FindShared(const void* ptr, size_t bytes) { return Table().Find(ptr, bytes); }

bool LookUpShared(const void* ptr, size_t bytes, SharedRange* out) {
  return Table().LookUp(ptr, bytes, out);
}

size_t SharedAllocCount() { return Table().Count(); }

PeerMapping& PeerMapping::operator=(PeerMapping&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) munmap(base_, bytes_);
    base_ = other.base_;
    bytes_ = other.bytes_;
    other.base_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

PeerMapping::~PeerMapping() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

namespace {

// A copy of `remote_fd` of process `pid`. pidfd_getfd needs ptrace-attach access to the
// process (same uid; under Yama ptrace_scope >= 1 also a ptracer relation), so a host may
// refuse it: the error says so (EPERM) and the caller falls back to the plain path.
Result<int> TakePeerFd(pid_t pid, int remote_fd) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    if (errno == ESRCH) return Unavailable(fmt::format("process {} is gone", pid));
    return ErrnoStatus(fmt::format("pidfd_open({})", pid), errno);
  }
  int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, remote_fd, 0));
  int err = errno;
  close(pidfd);
  if (fd < 0) {
    if (err == ESRCH) return Unavailable(fmt::format("process {} is gone", pid));
    return ErrnoStatus(fmt::format("pidfd_getfd(process {}, fd {})", pid, remote_fd), err);
  }
  return fd;
}

Status CheckBacking(int fd, pid_t pid, int remote_fd, size_t bytes, Backing backing) {
  struct stat st{};
  if (backing == Backing::kSealedMemfd) {
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < bytes) {
      return InvalidArgument(fmt::format(
          "fd {} of process {} is not a weft shared buffer of at least {} bytes", remote_fd,
          pid, bytes));
    }
    return Status::Ok();
  }
  if (backing != Backing::kShmFile || !IsSharedMemoryFile(fd, &st) ||
      static_cast<size_t>(st.st_size) < bytes) {
    return InvalidArgument(fmt::format(
        "fd {} of process {} is not a shared-memory file of at least {} bytes", remote_fd, pid,
        bytes));
  }
  return Status::Ok();
}

}  // namespace

bool IsSharedMemoryFile(int fd, struct stat* st) {
  struct statfs fs{};
  return fstat(fd, st) == 0 && S_ISREG(st->st_mode) && fstatfs(fd, &fs) == 0 &&
         (fs.f_type == TMPFS_MAGIC || fs.f_type == HUGETLBFS_MAGIC);
}

Result<PeerMapping> MapPeerBuffer(pid_t pid, int remote_fd, size_t bytes, Backing backing) {
  if (bytes == 0) return InvalidArgument("MapPeerBuffer: size is 0");
  WEFT_ASSIGN_OR_RETURN(int fd, TakePeerFd(pid, remote_fd));
  Status st = CheckBacking(fd, pid, remote_fd, bytes, backing);
  void* base = MAP_FAILED;
  if (st.ok()) {
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
      st = ErrnoStatus(fmt::format("mmap {} bytes of process {}'s buffer", bytes, pid), errno);
  }
  close(fd);  // the mapping keeps the memory alive
  if (!st.ok()) return st;
  return PeerMapping(base, bytes);
}

}  // namespace weft::transport::shm
