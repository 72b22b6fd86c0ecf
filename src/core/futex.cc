#include "core/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <climits>

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

}  // namespace

void FutexWaitAny(const std::vector<FutexWait>& waits, int64_t timeout_us) {
  if (waits.empty() || timeout_us <= 0) return;
#if defined(SYS_futex_waitv)
  if (waits.size() > 1 && !waitv_missing.load(std::memory_order_relaxed)) {
    if (WaitWorked(WaitMany(waits, timeout_us))) return;
    waitv_missing.store(true, std::memory_order_relaxed);
  }
#endif
  if (WaitWorked(WaitOne(waits.front().word, waits.front().expected, timeout_us))) return;
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
