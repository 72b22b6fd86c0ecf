#include "comm/registry.h"

#include <fmt/format.h>

#include "transport/shm/shared_buffer.h"

namespace weft::comm {

Result<uint64_t> Registry::Register(const void* ptr, size_t bytes) {
  if (ptr == nullptr) return InvalidArgument(std::string("weftCommRegister: buffer is NULL"));
  if (bytes == 0) return InvalidArgument(std::string("weftCommRegister: size is 0"));
  auto shared = transport::shm::FindShared(ptr, bytes);
  if (!shared.ok()) {
    return InvalidArgument("weftCommRegister: " + shared.status().message());
  }
  uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  MutexLock lock(&mu_);
  // The only candidates for overlap: the range starting at or before `begin`, and the first
  // starting after it.
  auto next = by_begin_.upper_bound(begin);
  if (next != by_begin_.end() && next->first < begin + bytes) {
    return InvalidArgument(fmt::format(
        "weftCommRegister: [{:#x}, +{}) overlaps registration {} at [{:#x}, +{})",
        begin, bytes, next->second.id, next->first, next->second.bytes));
  }
  if (next != by_begin_.begin()) {
    const Registration& prev = std::prev(next)->second;
    if (prev.begin + prev.bytes > begin) {
      return InvalidArgument(fmt::format(
          "weftCommRegister: [{:#x}, +{}) overlaps registration {} at [{:#x}, +{})",
          begin, bytes, prev.id, prev.begin, prev.bytes));
    }
  }
  Registration r;
  r.id = next_id_++;
  r.kind = MemoryKind::kHostShared;
  r.begin = begin;
  r.bytes = bytes;
  r.fd = shared->fd;
  r.fd_offset = shared->offset;
  r.fd_bytes = shared->alloc_bytes;
  by_begin_[begin] = r;
  begin_of_[r.id] = begin;
  return r.id;
}

Status Registry::Deregister(uint64_t id) {
  MutexLock lock(&mu_);
  auto it = begin_of_.find(id);
  if (it == begin_of_.end()) {
    return InvalidArgument(fmt::format(
        "weftCommDeregister: handle {} is not registered on this communicator "
        "(never registered, or already deregistered)", id));
  }
  by_begin_.erase(it->second);
  begin_of_.erase(it);
  return Status::Ok();
}

std::optional<Registration> Registry::Find(const void* ptr, size_t bytes) const {
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  MutexLock lock(&mu_);
  auto it = by_begin_.upper_bound(p);
  if (it == by_begin_.begin()) return std::nullopt;
  --it;
  const Registration& r = it->second;
  if (p < r.begin || p + bytes > r.begin + r.bytes) return std::nullopt;
  return r;
}

size_t Registry::Count() const {
  MutexLock lock(&mu_);
  return by_begin_.size();
}

}  // namespace weft::comm
