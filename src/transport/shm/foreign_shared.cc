#include "transport/shm/foreign_shared.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <utility>

#include "core/log.h"
#include "core/mutex.h"
#include "transport/shm/shared_buffer.h"

namespace weft::transport::shm {
namespace {

// PROCMAP_QUERY (include/uapi/linux/fs.h, Linux 6.11): Debian 12's kernel headers predate
// it, so the ABI is spelled here. The kernel checks `size`, so a mismatch is an error,
// never a misread.
struct ProcmapQuery {
  uint64_t size;
  uint64_t query_flags;
  uint64_t query_addr;
  uint64_t vma_start;
  uint64_t vma_end;
  uint64_t vma_flags;
  uint64_t vma_page_size;
  uint64_t vma_offset;
  uint64_t inode;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint32_t vma_name_size;
  uint32_t build_id_size;
  uint64_t vma_name_addr;
  uint64_t build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);
constexpr uint64_t kVmaReadable = 0x01, kVmaWritable = 0x02, kVmaShared = 0x08;

struct Vma {
  uintptr_t start = 0, end = 0;
  uint64_t offset = 0;  // of `start` in the file
  dev_t dev = 0;
  uint64_t inode = 0;
  std::string name;  // as /proc/self/maps shows it ("/dev/shm/x (deleted)", "/memfd:y")
};

// Files we have a descriptor of, by identity. Entries are never removed: an id must not
// be reused (a peer may still map the file it named), and a file with no descriptor
// (deleted, none held) can never get one again.
struct FileEntry {
  uint64_t id = 0;
  int fd = -1;               // -1: none found yet (one opened by name is kept until exit)
  bool unreachable = false;  // deleted and no descriptor held: none can be had again
};

class ForeignTable {
 public:
  // The maps descriptor is per process: one inherited across fork would describe the
  // parent's address space.
  bool Query(const void* ptr, Vma* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (maps_pid_ != getpid()) {
      if (maps_fd_ >= 0) close(maps_fd_);
      maps_fd_ = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
      maps_pid_ = getpid();
      supported_ = maps_fd_ >= 0;
    }
    if (!supported_) return false;
    char name[512];
    ProcmapQuery q{};
    q.size = sizeof(q);
    q.query_addr = reinterpret_cast<uintptr_t>(ptr);
    q.vma_name_size = sizeof(name);
    q.vma_name_addr = reinterpret_cast<uintptr_t>(name);
    if (ioctl(maps_fd_, kProcmapQuery, &q) != 0) {
      // ENOENT: no mapping at ptr; ENAMETOOLONG: a file name longer than `name` (not one
      // of /dev/shm's). Anything else (ENOTTY before Linux 6.11, or an emulator that does
      // not pass the ioctl on): detection is off.
      const int err = errno;
      if (err != ENOENT && err != ENAMETOOLONG) {
        supported_ = false;
        WEFT_INFO("buffers in shared files weft did not allocate (torch's share_memory_()) "
                  "are not detected here: PROCMAP_QUERY on /proc/self/maps failed ({}; it "
                  "needs Linux 6.11); weftMemAlloc buffers still take the registered path",
                  std::strerror(err));
      }
      return false;
    }
    const uint64_t need = kVmaReadable | kVmaWritable | kVmaShared;
    if ((q.vma_flags & need) != need || q.inode == 0) return false;
    out->start = q.vma_start;
    out->end = q.vma_end;
    out->offset = q.vma_offset;
    out->dev = makedev(q.dev_major, q.dev_minor);
    out->inode = q.inode;
    out->name.assign(name, strnlen(name, sizeof(name)));
    return true;
  }

  bool Supported() EXCLUDES(mu_) {
    Vma ignored;
    int probe = 0;
    Query(&probe, &ignored);  // a stack address (never shared): only whether it answers counts
    MutexLock lock(&mu_);
    return supported_;
  }

  // A descriptor of the file (dev, inode) and its size, or an error saying why not.
  Result<std::pair<FileEntry, size_t>> FileOf(const Vma& vma) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const auto key = std::make_pair(vma.dev, vma.inode);
    auto it = files_.find(key);
    struct stat st{};
    if (it != files_.end() && it->second.fd >= 0 && !IsFile(it->second.fd, vma, &st)) {
      it->second.fd = -1;  // closed since, and maybe reused: look again
    }
    if (it == files_.end() || (it->second.fd < 0 && !it->second.unreachable)) {
      FileEntry e;
      e.id = it != files_.end() ? it->second.id : next_id_++;
      e.fd = FindHeld(vma, &st);
      if (e.fd < 0 && opened_ < kKeepOpened) {
        e.fd = OpenByName(vma, &st);
        opened_ += e.fd >= 0 ? 1 : 0;
      }
      e.unreachable = e.fd < 0 && vma.name.find(" (deleted)") != std::string::npos;
      it = files_.insert_or_assign(key, e).first;
    }
    if (it->second.fd < 0)
      return InvalidArgument(fmt::format("this process holds no descriptor of {}", vma.name));
    return std::make_pair(it->second, static_cast<size_t>(st.st_size));
  }

 private:
  static constexpr int kKeepOpened = 64;

  // Whether `fd` is the mapped file (dev, inode), in shared memory; fills `st`.
  static bool IsFile(int fd, const Vma& vma, struct stat* st) {
    return IsSharedMemoryFile(fd, st) && st->st_dev == vma.dev && st->st_ino == vma.inode;
  }

  // A descriptor this process holds of the file (torch keeps one per shared storage).
  static int FindHeld(const Vma& vma, struct stat* st) {
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr) return -1;
    const int self = dirfd(dir);
    int found = -1;
    while (dirent* d = readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(d->d_name, &end, 10);
      if (end == d->d_name || *end != '\0' || fd == self) continue;
      if (IsFile(static_cast<int>(fd), vma, st)) {
        found = static_cast<int>(fd);
        break;
      }
    }
    closedir(dir);
    return found;
  }

  // A named file under /dev/shm (shm_open's, torch's "file_system" strategy) whose
  // descriptor was closed after mmap.
  static int OpenByName(const Vma& vma, struct stat* st) {
    const std::string_view name = vma.name;
    if (name.substr(0, 9) != "/dev/shm/" || name.find(" (deleted)") != std::string::npos)
      return -1;
    const int fd = open(vma.name.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    if (!IsFile(fd, vma, st)) {
      close(fd);
      return -1;
    }
    return fd;
  }

  Mutex mu_;
  int maps_fd_ GUARDED_BY(mu_) = -1;
  pid_t maps_pid_ GUARDED_BY(mu_) = 0;
  bool supported_ GUARDED_BY(mu_) = false;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  int opened_ GUARDED_BY(mu_) = 0;
  std::map<std::pair<dev_t, uint64_t>, FileEntry> files_ GUARDED_BY(mu_);
};

ForeignTable& Table() {
  static ForeignTable* table = new ForeignTable;  // never destroyed: used at exit
  return *table;
}

}  // namespace

Result<ForeignRange> FindForeignShared(const void* ptr, size_t bytes) {
  Vma vma;
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || !Table().Query(ptr, &vma))
    return InvalidArgument(fmt::format("{} is not in a shared file mapping", ptr));
  if (bytes > vma.end - p) {
    return InvalidArgument(fmt::format("{} bytes at {} run past their mapping of {}", bytes, ptr,
                                vma.name));
  }
  WEFT_ASSIGN_OR_RETURN(auto file, Table().FileOf(vma));
  const size_t offset = vma.offset + (p - vma.start);
  if (offset + bytes > file.second) {
    return InvalidArgument(fmt::format("{} bytes at {} run past the end of {} ({} bytes)", bytes, ptr,
                                vma.name, file.second));
  }
  return ForeignRange{file.first.id, file.first.fd, file.second, offset};
}

bool ForeignSharedDetectionAvailable() { return Table().Supported(); }

}  // namespace weft::transport::shm
