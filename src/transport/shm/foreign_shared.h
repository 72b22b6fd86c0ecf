// Shared memory weft did not allocate: a range inside a shared, writable mapping of a file
// in a tmpfs (shm_open's /dev/shm, a memfd), as torch's Tensor.share_memory_() makes. The
// peers on the host can map the same file, so such buffers take the registered path with
// no weftMemAlloc and no weftCommRegister (docs/TRANSPORTS.md, "Registered buffers").
//
// Finding the mapping behind a pointer must be cheap, because every call the registered
// path considers asks it of buffers that turn out to be plain: it is one PROCMAP_QUERY
// ioctl on /proc/self/maps (Linux 6.11 and later, about a microsecond); on older kernels
// detection is off and FindForeignShared always answers no. The file is published to
// the peers as a descriptor this process already holds (torch keeps one per shared
// storage), found once by scanning /proc/self/fd and checked again on every call (an fd
// number can be closed and reused); failing that, a named file in /dev/shm is opened and
// the descriptor kept (the last kKeepOpened of them).
//
// Unlike weftMemAlloc's memfds these files are not sealed: a process that shrinks one
// turns every peer's access past the new end into SIGBUS, as it would for any process
// mapping it. torch never resizes a shared storage.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace weft::transport::shm {

struct ForeignRange {
  uint64_t id = 0;        // this process's number for the file, never 0, never reused
  int fd = -1;            // a descriptor of the file, valid until this process closes it
  size_t file_bytes = 0;  // the file's size
  size_t offset = 0;      // of the range's first byte in the file
};

// The tmpfs file mapping that holds all of [ptr, ptr + bytes), when there is one and this
// process holds or can open a descriptor of the file. InvalidArgument, saying why, otherwise
// (anonymous or private memory, a file on another file system, a range running past its
// mapping or its file, a kernel without PROCMAP_QUERY).
Result<ForeignRange> FindForeignShared(const void* ptr, size_t bytes);

// Whether this kernel answers PROCMAP_QUERY, that is, whether detection works here.
bool ForeignSharedDetectionAvailable();

}  // namespace weft::transport::shm
