// Where collectives_check's buffers live (--mem, check_options.h): plain heap memory, or
// one arena from weftMemAlloc, registered with the communicator (weftCommRegister) or
// not, or a file in /dev/shm mapped shared as torch's share_memory_() makes one, so that
// the calls can take the path for registered buffers (docs/TRANSPORTS.md, "Registered
// buffers"). The arena is allocated once and grown (freed and allocated
// again, larger) when a batch needs more, as an application would keep its buffers.
#pragma once

#include <cstddef>
#include <string>

#include "weft/weft.h"

namespace check {

// kShared: registered; kAllocated: from weftMemAlloc, not registered; kEven: kShared on
// even ranks, plain on odd ones; kShmFile: shm_open, mmap MAP_SHARED, unlinked at once with
// the descriptor kept (torch's "file_descriptor" sharing strategy).
enum class Memory { kPlain, kShared, kAllocated, kEven, kShmFile };

bool ParseMemory(const std::string& s, Memory* out);
const char* MemoryName(Memory m);

class SharedArena {
 public:
  // `comm`: the communicator to register with, or nullptr to leave the arena unregistered.
  // `shm_file`: the arena is a /dev/shm file weft did not allocate (comm must be nullptr).
  explicit SharedArena(weftComm_t comm, bool shm_file = false)
      : comm_(comm), shm_file_(shm_file) {}
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // Makes room for `bytes` and hands out memory from the start again. On failure returns
  // false and sets *error to the API's message.
  bool Reset(size_t bytes, std::string* error);
  // The next `bytes` of the arena, 8-byte aligned; nullptr when Reset reserved too little.
  void* Take(size_t bytes);

 private:
  void Release();
  weftComm_t comm_;
  bool shm_file_;
  int fd_ = -1;  // shm_file_: the file's, kept open as torch keeps it
  void* base_ = nullptr;
  void* handle_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

}  // namespace check
