#include "check_memory.h"

#include <cstdio>

namespace check {

bool ParseMemory(const std::string& s, Memory* out) {
  if (s == "plain") *out = Memory::kPlain;
  else if (s == "shared") *out = Memory::kShared;
  else if (s == "allocated") *out = Memory::kAllocated;
  else if (s == "even") *out = Memory::kEven;
  else return false;
  return true;
}

const char* MemoryName(Memory m) {
  switch (m) {
    case Memory::kPlain: return "plain";
    case Memory::kShared: return "shared";
    case Memory::kAllocated: return "allocated";
    case Memory::kEven: return "even";
  }
  return "?";
}

SharedArena::~SharedArena() { Release(); }

void SharedArena::Release() {
  if (base_ == nullptr) return;
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
