// Shared buffers: memory that the other processes of this host can map (weftMemAlloc).
//
// Each allocation is its own memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING, mode 0600), sized
// once with ftruncate and then sealed with F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL:
// a peer that maps the buffer gets the fd too, and without F_SEAL_SHRINK it could
// ftruncate it smaller and turn every access past the new end, in every process that has
// it mapped, into SIGBUS. F_SEAL_GROW keeps the size the owner registered the size
// there is; F_SEAL_SEAL stops anyone from removing the seals. The fd is never reachable
// by name (memfds live in no directory), only by a process that is given it.
//
// The table of allocations is process-wide (weftMemAlloc takes no communicator, as
// ncclMemAlloc): one buffer can be registered with several communicators.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace weft::transport::shm {

// Where a range of bytes lies inside one shared allocation.
struct SharedRange {
  uint64_t id = 0;           // the allocation's number in this process, never reused, never 0
  int fd = -1;               // the allocation's memfd (owned by the table; do not close)
  void* base = nullptr;      // the allocation's first byte in this process
  size_t alloc_bytes = 0;    // the allocation's size
  size_t offset = 0;         // of the range's first byte from `base`
};

// A new shared buffer of `bytes` bytes (page-rounded inside), zero-filled. Errors:
// InvalidArgument for bytes == 0, SystemError when the kernel refuses (no memfd, no memory).
Result<void*> SharedAlloc(size_t bytes);
// Frees a buffer SharedAlloc returned. Errors: InvalidArgument for a null pointer, one
// SharedAlloc did not return (including a pointer inside a buffer) or one already freed.
Status SharedFree(void* ptr);
// The allocation that holds all of [ptr, ptr + bytes); NotFound as InvalidArgument naming why.
Result<SharedRange> FindShared(const void* ptr, size_t bytes);
// The same without the why: false when no allocation holds all of the range. It builds no
// message, so a plain buffer costs a lock and a map lookup (comm::RegisteredPath asks it
// on every call it considers).
bool LookUpShared(const void* ptr, size_t bytes, SharedRange* out);
// Number of live allocations (for tests).
size_t SharedAllocCount();

// A peer's shared allocation mapped into this process (read and write). Unmaps on
// destruction. Move-only.
class PeerMapping {
 public:
  PeerMapping() = default;
  PeerMapping(void* base, size_t bytes) : base_(base), bytes_(bytes) {}
  PeerMapping(PeerMapping&& other) noexcept { *this = std::move(other); }
  PeerMapping& operator=(PeerMapping&& other) noexcept;
  ~PeerMapping();
  void* base() const { return base_; }
  size_t bytes() const { return bytes_; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
};

// Whether `fd` is a regular file in a tmpfs or hugetlbfs (shared memory, not a disk
// file); fills `st` from fstat.
bool IsSharedMemoryFile(int fd, struct stat* st);

// What a peer's published descriptor is (SharedRegion::backing).
enum class Backing : uint32_t {
  kSealedMemfd = 0,  // weftMemAlloc's: sealed against shrinking, so a mapping never faults
  kShmFile = 1,      // a file in a tmpfs the caller mapped shared (foreign_shared.h)
};

// Maps the file that process `pid` holds as `remote_fd` (a SharedRange::fd or
// ForeignRange::fd it published), `bytes` long, taking a copy of the fd with pidfd_open +
// pidfd_getfd and closing it once mapped. Checks that the fd is what `backing` says, at
// least `bytes` long: a memfd sealed against shrinking, so that the mapping cannot fault
// later, or a regular file in a tmpfs or hugetlbfs. Errors: Unavailable when the process is
// gone, SystemError when the kernel refuses (EPERM: ptrace access denied, ENOSYS: no
// pidfd); InvalidArgument when the fd is not such a file.
Result<PeerMapping> MapPeerBuffer(pid_t pid, int remote_fd, size_t bytes,
                                  Backing backing = Backing::kSealedMemfd);

}  // namespace weft::transport::shm
