#include "check_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace check {

bool ParseMemory(const std::string& s, Memory* out) {
  if (s == "plain") *out = Memory::kPlain;
  else if (s == "shared") *out = Memory::kShared;
  else if (s == "allocated") *out = Memory::kAllocated;
  else if (s == "even") *out = Memory::kEven;
  else if (s == "shm-file") *out = Memory::kShmFile;
  else return false;
  return true;
}

const char* MemoryName(Memory m) {
  switch (m) {
    case Memory::kPlain: return "plain";
    case Memory::kShared: return "shared";
    case Memory::kAllocated: return "allocated";
    case Memory::kEven: return "even";
    case Memory::kShmFile: return "shm-file";
  }
  return "?";
}

SharedArena::~SharedArena() { Release(); }

namespace {

// A file in /dev/shm of `bytes` bytes mapped shared, already unlinked; *fd keeps it.
void* MapShmFile(size_t bytes, int* fd, std::string* error) {
  static std::atomic<int> serial{0};
  const std::string name =
      "/weft-check-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
  *fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (*fd < 0) {
    *error = "shm_open " + name + ": " + std::strerror(errno);
    return nullptr;
  }
  shm_unlink(name.c_str());
  void* base = MAP_FAILED;
  if (ftruncate(*fd, static_cast<off_t>(bytes)) == 0)
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  if (base == MAP_FAILED) {
    *error = "mapping " + name + ": " + std::strerror(errno);
    close(*fd);
    *fd = -1;
    return nullptr;
  }
  return base;
}

}  // namespace

void SharedArena::Release() {
  if (base_ == nullptr) return;
  if (shm_file_) {
    munmap(base_, capacity_);
    close(fd_);
    fd_ = -1;
    base_ = nullptr;
    capacity_ = 0;
    return;
  }
  if ((comm_ != nullptr && weftCommDeregister(comm_, handle_) != weftSuccess) ||
      weftMemFree(base_) != weftSuccess) {
    std::fprintf(stderr, "collectives_check: releasing the shared arena: %s\n",
                 weftGetLastError(comm_));
  }
  base_ = handle_ = nullptr;
  capacity_ = 0;
}

bool SharedArena::Reset(size_t bytes, std::string* error) {
  used_ = 0;
  if (bytes <= capacity_) return true;
  Release();
  size_t want = 1 << 20;
  while (want < bytes) want *= 2;
  if (shm_file_) {
    base_ = MapShmFile(want, &fd_, error);
    if (base_ == nullptr) return false;
    capacity_ = want;
    return true;
  }
  weftResult_t res = weftMemAlloc(&base_, want);
  if (res == weftSuccess && comm_ != nullptr) res = weftCommRegister(comm_, base_, want, &handle_);
  if (res != weftSuccess) {
    *error = std::string("shared arena of ") + std::to_string(want) +
             " bytes: " + weftGetErrorString(res) + ": " + weftGetLastError(comm_);
    if (base_ != nullptr) weftMemFree(base_);
    base_ = nullptr;
    return false;
  }
  capacity_ = want;
  return true;
}

void* SharedArena::Take(size_t bytes) {
  const size_t at = (used_ + 7) & ~size_t{7};
  if (base_ == nullptr || at + bytes > capacity_) return nullptr;
  used_ = at + bytes;
  return static_cast<char*>(base_) + at;
}

}  // namespace check
