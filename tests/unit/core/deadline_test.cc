#include "core/deadline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace weft {
namespace {

using namespace std::chrono_literals;

TEST(DeadlineTest, ExpiresAfterItsDuration) {
  Deadline d = Deadline::After(30ms);
  EXPECT_FALSE(d.expired());
  EXPECT_GT(d.RemainingMs(), 0);
  std::this_thread::sleep_for(40ms);
  EXPECT_TRUE(d.expired());
  EXPECT_EQ(d.RemainingMs(), 0);
  EXPECT_FALSE(Deadline::Never().expired());
}

// The clock of a LazyDeadline starts at its first use, not at its creation: a call that
// never waits never reads the clock, and one that does is still bounded.
TEST(LazyDeadlineTest, StartsAtFirstUse) {
  LazyDeadline lazy(50ms);
  std::this_thread::sleep_for(80ms);  // longer than its duration, before any use
  EXPECT_FALSE(lazy.expired()) << "the duration counts from the first use";
  const auto first = lazy.Get().at();
  EXPECT_EQ(lazy.Get().at(), first) << "fixed once started";
  std::this_thread::sleep_for(70ms);
  EXPECT_TRUE(lazy.expired());
}

TEST(LazyDeadlineTest, NeverNeverExpires) {
  LazyDeadline never = LazyDeadline::Never();
  EXPECT_FALSE(never.expired());
  EXPECT_EQ(never.Get().at(), Deadline::Never().at());
  EXPECT_FALSE(LazyDeadline::AfterSeconds(3600).expired());
}

}  // namespace
}  // namespace weft
