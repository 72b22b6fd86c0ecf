#include "core/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <climits>

#include "core/deadline.h"

namespace weft {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a futex word must be a plain 32-bit word");

// Shared (not FUTEX_PRIVATE) operations: the words live in memory mapped by several
// processes.
long WaitOne(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_us) {
  timespec rel{static_cast<time_t>(timeout_us / 1000000),
               static_cast<long>(timeout_us % 1000000) * 1000};
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &rel,
                 nullptr, 0);
}

#if defined(SYS_futex_waitv)
#if defined(FUTEX2_SIZE_U32)
constexpr uint32_t kWordU32 = FUTEX2_SIZE_U32;
#else
constexpr uint32_t kWordU32 = FUTEX_32;  // its name in kernel headers before 6.7
#endif
std::atomic<bool> waitv_missing{false};  // set once the kernel answers ENOSYS (a hint: relaxed)

long WaitMany(const std::vector<FutexWait>& waits, int64_t timeout_us) {
  constexpr size_t kMax = 128;  // FUTEX_WAITV_MAX
  futex_waitv v[kMax] = {};
  size_t n = std::min(waits.size(), kMax);
  for (size_t i = 0; i < n; ++i) {
    v[i].val = waits[i].expected;
    v[i].uaddr = reinterpret_cast<uintptr_t>(waits[i].word);
    v[i].flags = kWordU32;  // shared: no FUTEX2_PRIVATE
  }
  // futex_waitv takes an absolute time on the clock named in its last argument.
  timespec abs{};
  clock_gettime(CLOCK_MONOTONIC, &abs);
  abs.tv_sec += static_cast<time_t>(timeout_us / 1000000);
  abs.tv_nsec += static_cast<long>(timeout_us % 1000000) * 1000;
  if (abs.tv_nsec >= 1000000000) {
    abs.tv_sec += 1;
    abs.tv_nsec -= 1000000000;
  }
  return syscall(SYS_futex_waitv, v, static_cast<unsigned>(n), 0u, &abs, CLOCK_MONOTONIC);
}
#endif

// The outcomes of a wait that worked: woken, the value had already changed, timed out,
// interrupted. Anything else (ENOSYS on an old kernel, EPERM under a seccomp filter that
// does not know the call) means the call is unusable here.
bool WaitWorked(long ret) {
  return ret >= 0 || errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR;
}

// Without futex_waitv (Linux < 5.16, such as Amazon Linux 2's 5.10 on many Graviton
// hosts, or qemu-user, which does not emulate it): sleep on the first word in slices of
// kFallbackSliceUs, and look at the others before each slice, so a change to any word
// is seen within a slice instead of only at the timeout. False if the futex call itself
// is unusable here.
constexpr int64_t kFallbackSliceUs = 1000;

}  // namespace

namespace futex_internal {

bool WaitFirstWatchingOthers(const std::vector<FutexWait>& waits, int64_t timeout_us) {
  const Deadline deadline = Deadline::After(std::chrono::microseconds(timeout_us));
  for (;;) {
    // Relaxed: a hint to stop sleeping; the caller re-checks its condition with its own
    // ordering (acquire) after this returns.
    for (size_t i = 1; i < waits.size(); ++i)
      if (waits[i].word->load(std::memory_order_relaxed) != waits[i].expected) return true;
    const int64_t left_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                deadline.at() - Deadline::Clock::now())
                                .count();
    if (left_us <= 0) return true;
    const long ret =
        WaitOne(waits.front().word, waits.front().expected, std::min(left_us, kFallbackSliceUs));
    if (ret >= 0 || errno == EAGAIN || errno == EINTR) return true;  // woken or changed
    if (errno != ETIMEDOUT) return false;
  }
}

}  // namespace futex_internal

void FutexWaitAny(const std::vector<FutexWait>& waits, int64_t timeout_us) {
  if (waits.empty() || timeout_us <= 0) return;
  bool worked = false;
  if (waits.size() == 1) {
    worked = WaitWorked(WaitOne(waits.front().word, waits.front().expected, timeout_us));
  } else {
#if defined(SYS_futex_waitv)
    if (!waitv_missing.load(std::memory_order_relaxed)) {
      if (WaitWorked(WaitMany(waits, timeout_us))) return;
      waitv_missing.store(true, std::memory_order_relaxed);
    }
#endif
    worked = futex_internal::WaitFirstWatchingOthers(waits, timeout_us);
  }
  if (worked) return;
  // No futex at all: a short plain sleep keeps the caller from spinning.
  timespec nap{0, static_cast<long>(std::min<int64_t>(timeout_us, 200)) * 1000};
  nanosleep(&nap, nullptr);
}

// The kernel compares the word and queues the waiter atomically (under the futex's
// hash-bucket lock, with a full barrier), so a waiter that read the old value before the
// caller's change is either refused (EAGAIN) or queued and woken here. Ordering the
// change against the waiter's other state is the caller's job (ShmLink::RingPeer).
void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
          0);
}

}  // namespace weft
