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
    return After(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(s)));
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

inline int Deadline::RemainingMs() const {
  auto now = Clock::now();
  if (now >= at_) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - now).count();
  return ms > INT32_MAX ? INT32_MAX : static_cast<int>(ms) + 1;
}

}  // namespace weft
