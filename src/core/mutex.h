// A mutex, a scoped lock and a condition variable that clang's thread-safety analysis
// understands (-Wthread-safety; libstdc++'s std::mutex carries no annotations). Guarded
// members say GUARDED_BY(mu_), helpers that expect the lock held say REQUIRES(mu_), and
// the compiler checks every access.
//
// The macros expand to nothing on compilers without the attributes (GCC), so the one
// build that checks is the clang build CI runs (scripts/thread-safety.sh).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define WEFT_TSA(x) __attribute__((x))
#else
#define WEFT_TSA(x)
#endif

#define CAPABILITY(x) WEFT_TSA(capability(x))
#define SCOPED_CAPABILITY WEFT_TSA(scoped_lockable)
#define GUARDED_BY(x) WEFT_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) WEFT_TSA(pt_guarded_by(x))
#define REQUIRES(...) WEFT_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) WEFT_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) WEFT_TSA(release_capability(__VA_ARGS__))
#define EXCLUDES(...) WEFT_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) WEFT_TSA(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS WEFT_TSA(no_thread_safety_analysis)

namespace weft {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis the caller holds the lock, where it cannot see that (a callback
  // run under a lock its caller took).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope; Unlock()/Lock() let a scope drop it for a stretch.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  void Unlock() RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
  bool held_ = true;
};

// Predicates run inside the wait, where the analysis cannot see the lock: callers loop
// (`while (!ready_) cv_.Wait(&mu_);`) so that each read is checked in their own scope.
class CondVar {
 public:
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's scope releases it
  }
  // False once `at` has passed.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point at) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    bool in_time = cv_.wait_until(lock, at) == std::cv_status::no_timeout;
    lock.release();
    return in_time;
  }
  void NotifyAll() { cv_.notify_all(); }
  void NotifyOne() { cv_.notify_one(); }

 private:
  std::condition_variable cv_;
};

}  // namespace weft
