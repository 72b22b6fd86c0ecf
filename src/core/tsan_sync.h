// Happens-before that ThreadSanitizer cannot see by itself: two threads of one process
// that synchronize through shared memory mapped twice (each end of a shm segment maps it
// at its own address, as separate processes would). TSan matches a release with an
// acquire by address, so a store-release through one mapping and a load-acquire through
// the other look unrelated, and data handed over that way (a fake device buffer read by
// a peer's stream after a barrier) is reported as a race although the ring orders it.
// These calls tie both ends to one address per named channel. Outside TSan builds they
// compile to nothing.
#pragma once

#include <string>

#if defined(__SANITIZE_THREAD__)
#define WEFT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_TSAN 1
#endif
#endif

#ifdef WEFT_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace weft {

// The same address for the same `name` in this process, for as long as it runs; nullptr
// outside TSan builds.
void* TsanSyncKey(const std::string& name);

inline void TsanRelease(void* key) {
#ifdef WEFT_TSAN
  if (key != nullptr) __tsan_release(key);
#else
  (void)key;
#endif
}

inline void TsanAcquire(void* key) {
#ifdef WEFT_TSAN
  if (key != nullptr) __tsan_acquire(key);
#else
  (void)key;
#endif
}

}  // namespace weft
