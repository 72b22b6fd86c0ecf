// The verdict that fails a tcp link whose peer stopped acknowledging mid-transfer
// (stall_detector.h). The end-to-end checks are the netns mid-transfer cut
// (netns_partition_mid_transfer) and the slow reader (mp_slow_reader_tcp).
#include "transport/tcp/stall_detector.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace weft::transport::tcp {
namespace {

TEST(StallDetectorTest, UnacknowledgedDataPastTheBudgetMeansGone) {
  EXPECT_TRUE(PeerStoppedAcknowledging({4001, 12, 0}, 4000));
  EXPECT_FALSE(PeerStoppedAcknowledging({4000, 12, 0}, 4000));  // at the bound: not yet
  EXPECT_FALSE(PeerStoppedAcknowledging({900, 12, 0}, 4000));
}

TEST(StallDetectorTest, AnsweredZeroWindowProbesMeanAliveButNotReading) {
  // A reader that sleeps: window zero, nothing unacknowledged, its answers reset the
  // unanswered-probe count, however long ago the last data was acknowledged.
  EXPECT_FALSE(PeerStoppedAcknowledging({60000, 0, 0}, 4000));
  EXPECT_FALSE(PeerStoppedAcknowledging({60000, 0, 1}, 4000));  // one probe in flight
  EXPECT_TRUE(PeerStoppedAcknowledging({60000, 0, 2}, 4000));
}

TEST(StallDetectorTest, IdleConnectionIsLeftToKeepAlive) {
  EXPECT_FALSE(PeerStoppedAcknowledging({120000, 0, 0}, 4000));
}

TEST(StallDetectorTest, BudgetZeroTurnsItOff) {
  EXPECT_FALSE(PeerStoppedAcknowledging({120000, 50, 5}, 0));
  StallDetector off(0);
  for (int i = 0; i < 1024; ++i) EXPECT_EQ(off.Check(-1), "");
}

TEST(StallDetectorTest, NonTcpSocketIsNeverDeclaredGone) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  StallDetector d(1);
  for (int i = 0; i < 4096; ++i) EXPECT_EQ(d.Check(sv[0]), "");
  ::close(sv[0]);
  ::close(sv[1]);
}

}  // namespace
}  // namespace weft::transport::tcp
