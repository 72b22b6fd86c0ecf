// A point in monotonic time by which a blocking operation must finish. Every wait in
// weft takes one, so no call can block forever.
#pragma once

#include <chrono>
#include <cstdint>

namespace weft {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline After(std::chrono::nanoseconds d) { return Deadline(Clock::now() + d); }
  static Deadline AfterSeconds(double s) {
    return After(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s)));
  }
  static Deadline Never() { return Deadline(Clock::time_point::max()); }

  bool expired() const { return Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, INT32_MAX]; for poll(2).
  int RemainingMs() const;
  Clock::time_point at() const { return at_; }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

// Where a call's timeout comes from, for the messages of the waits it bounds.
inline constexpr char kTimeoutSources[] = "WEFT_TIMEOUT, weftConfig_t or weftCommSetTimeout";

// A deadline `d` after its first use rather than after its creation, for the per-call
// deadline of a collective: most small calls finish before they ever wait long enough to
// look at it, so they never pay for reading the clock (~25-70 ns in a VM, as much as a
// small message). A call that waits starts its clock within a few polls (microseconds)
// of its start, so the wait stays bounded by `d` plus that.
class LazyDeadline {
 public:
  explicit LazyDeadline(std::chrono::nanoseconds d) : d_(d) {}
  static LazyDeadline AfterSeconds(double s) {
    return LazyDeadline(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s)));
  }
  static LazyDeadline Never() { return LazyDeadline(std::chrono::nanoseconds::max()); }

  const Deadline& Get() const {
    if (!started_) {
      at_ = d_ == std::chrono::nanoseconds::max() ? Deadline::Never() : Deadline::After(d_);
      started_ = true;
    }
    return at_;
  }
  bool expired() const { return Get().expired(); }
  // The bound it was made with, for messages.
  double seconds() const { return std::chrono::duration<double>(d_).count(); }

 private:
  std::chrono::nanoseconds d_;
  mutable bool started_ = false;
  mutable Deadline at_ = Deadline::Never();
};

inline int Deadline::RemainingMs() const {
  auto now = Clock::now();
  if (now >= at_) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - now).count();
  return ms > INT32_MAX ? INT32_MAX : static_cast<int>(ms) + 1;
}

}  // namespace weft
