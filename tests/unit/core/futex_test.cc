#include "core/futex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

TEST(FutexTest, ReturnsAtOnceWhenAWordAlreadyDiffers) {
  std::atomic<uint32_t> a{1}, b{7};
  auto t0 = Clock::now();
  // The second word differs from what the caller saw: no sleep at all (a 60 s timeout
  // that were taken would fail the test by its ctest timeout).
  FutexWaitAny({{&a, 1}, {&b, 6}}, 60'000'000);
  FutexWaitAny({{&b, 6}}, 60'000'000);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
}

TEST(FutexTest, TimesOutWhenNobodyWakes) {
  std::atomic<uint32_t> a{0}, b{0};
  auto t0 = Clock::now();
  FutexWaitAny({{&a, 0}, {&b, 0}}, 20'000);
  FutexWaitAny({{&a, 0}}, 20'000);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(30));  // both slept (~20 ms each)
}

// A sleeper on several words is woken by a change to any one of them: the second
// word here, so a kernel without futex_waitv (first word only) would time out instead.
TEST(FutexTest, WakeOnAnyWordEndsTheSleep) {
  for (int which = 0; which < 2; ++which) {
    std::atomic<uint32_t> words[2] = {0, 0};
    std::atomic<bool> woke{false};
    std::thread sleeper([&] {
      FutexWaitAny({{&words[0], 0}, {&words[1], 0}}, 60'000'000);
      woke = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    words[which].fetch_add(1);
    FutexWakeAll(&words[which]);
    auto t0 = Clock::now();
    sleeper.join();
    EXPECT_TRUE(woke);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30)) << "word " << which;
  }
}

// The path for kernels without futex_waitv (Linux < 5.16, qemu-user): it sleeps on the
// first word only, and must still notice a change to another word within its 1 ms
// slices, not at the 60 s timeout.
TEST(FutexFallbackTest, ReturnsAtOnceWhenAnotherWordAlreadyDiffers) {
  std::atomic<uint32_t> a{1}, b{7};
  auto t0 = Clock::now();
  EXPECT_TRUE(futex_internal::WaitFirstWatchingOthers({{&a, 1}, {&b, 6}}, 60'000'000));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
}

TEST(FutexFallbackTest, SeesAChangeToAnotherWordWithinASlice) {
  std::atomic<uint32_t> words[3] = {0, 0, 0};
  std::thread changer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    words[2].store(1);  // no wake: the sleeper is queued on words[0] only
  });
  auto t0 = Clock::now();
  EXPECT_TRUE(futex_internal::WaitFirstWatchingOthers(
      {{&words[0], 0}, {&words[1], 0}, {&words[2], 0}}, 60'000'000));
  changer.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
}

TEST(FutexFallbackTest, TimesOutWhenNothingChanges) {
  std::atomic<uint32_t> a{0}, b{0};
  auto t0 = Clock::now();
  EXPECT_TRUE(futex_internal::WaitFirstWatchingOthers({{&a, 0}, {&b, 0}}, 20'000));
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(20));
}

}  // namespace
}  // namespace weft
