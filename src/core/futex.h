// Sleeping on a 32-bit word in shared memory until another process changes it (Linux
// futexes). Links without a file descriptor (shm) use this so that a waiting rank can
// sleep and still be woken within microseconds of its peer's progress, instead of
// polling with a fixed sleep that delays every wake-up by up to the sleep's length.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace weft {

struct FutexWait {
  std::atomic<uint32_t>* word = nullptr;
  uint32_t expected = 0;  // sleep only while *word still holds this value
};

// Sleeps until any word differs from its expected value (or is woken by FutexWakeAll),
// at most `timeout_us` microseconds; returns early, at once, if a word already differs.
// Spurious wake-ups are allowed: callers re-check their condition. With more than one
// word this uses futex_waitv (Linux 5.16); where that is missing or filtered (seccomp) it
// sleeps on the first word in 1 ms slices and looks at the others between them, so a
// change to another word is seen within 1 ms; with no futex at all it sleeps 200 µs at
// most.
void FutexWaitAny(const std::vector<FutexWait>& waits, int64_t timeout_us);

// Wakes every process sleeping on `word` (the caller changes the word first).
void FutexWakeAll(std::atomic<uint32_t>* word);

namespace futex_internal {
// FutexWaitAny's path for kernels without futex_waitv, callable where the kernel has it
// (tests). False if the futex call itself is unusable.
bool WaitFirstWatchingOthers(const std::vector<FutexWait>& waits, int64_t timeout_us);
}  // namespace futex_internal

}  // namespace weft
