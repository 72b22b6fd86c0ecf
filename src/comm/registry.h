// Registered buffers of one communicator (weftCommRegister / weftCommDeregister).
//
// A registration names a byte range [ptr, ptr + bytes) that collectives on this
// communicator may later use without copies: for host memory, a range inside a shared
// buffer (weftMemAlloc), whose memfd the peers on this host can map; for device memory
// (later, issue 21), a range the device layer can export (CUDA IPC) — the kind is part
// of the registration, so both go through the same calls. Registered ranges of one
// communicator never overlap. Deregistration (or destroying the registry) releases what
// the registry holds; it does not free the memory.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

#include "core/mutex.h"
#include "core/status.h"

namespace weft::comm {

enum class MemoryKind : uint8_t { kHostShared = 0, kDevice };

struct Registration {
  uint64_t id = 0;        // the handle's value, never 0, never reused in one registry
  MemoryKind kind = MemoryKind::kHostShared;
  uintptr_t begin = 0;
  size_t bytes = 0;
  // kHostShared: the memfd holding the range (owned by the shared-buffer table) and the
  // range's offset in it, which a peer needs to map it.
  int fd = -1;
  size_t fd_offset = 0;
  size_t fd_bytes = 0;    // the whole memfd's size
};

class Registry {
 public:
  // Registers [ptr, ptr + bytes). Errors (InvalidArgument, naming the cause; the API adds the rank): null
  // ptr, bytes == 0, memory weft cannot share (not from weftMemAlloc), a range that
  // overlaps one already registered here.
  Result<uint64_t> Register(const void* ptr, size_t bytes) EXCLUDES(mu_);
  // Errors: InvalidArgument for a handle not registered here (or already deregistered).
  Status Deregister(uint64_t id) EXCLUDES(mu_);
  // The registration covering all of [ptr, ptr + bytes), if any.
  std::optional<Registration> Find(const void* ptr, size_t bytes) const EXCLUDES(mu_);
  size_t Count() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<uintptr_t, Registration> by_begin_ GUARDED_BY(mu_);
  std::map<uint64_t, uintptr_t> begin_of_ GUARDED_BY(mu_);
};

}  // namespace weft::comm
