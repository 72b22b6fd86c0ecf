// RailLink over tcp links on socketpairs (one per rail): striping, FIFO order, errors and polling,
// without the network.
#include "transport/rail_link.h"

#include "transport/tcp/tcp_link.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

namespace weft::transport::tcp {
namespace {

using ::testing::HasSubstr;
using transport::testing::Header;
using transport::testing::Pattern;
using transport::testing::Pump;
using transport::testing::TwoWayMessages;

constexpr uint64_t kStripeMin = 64 << 10;

struct Pair {
  std::unique_ptr<RailLink> a, b;
  std::vector<int> a_fds, b_fds;  // each rail's socket, for byte counts and faults
};

Pair MakePair(int rails) {
  Pair p;
  std::vector<std::unique_ptr<Link>> ra, rb;
  for (int k = 0; k < rails; ++k) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    p.a_fds.push_back(fds[0]);
    p.b_fds.push_back(fds[1]);
    ra.push_back(std::make_unique<TcpLink>(0, 1, net::Fd(fds[0]), "b-rail" + std::to_string(k)));
    rb.push_back(std::make_unique<TcpLink>(1, 0, net::Fd(fds[1]), "a-rail" + std::to_string(k)));
  }
  p.a = RailLink::Create(0, 1, std::move(ra), kStripeMin).value();
  p.b = RailLink::Create(1, 0, std::move(rb), kStripeMin).value();
  return p;
}

TEST(RailLinkTest, ManyMessagesOfAllSizesBothWays) {
  for (int rails : {2, 3}) {
    Pair p = MakePair(rails);
    TwoWayMessages m({0, 1, 4096, kStripeMin - 1, kStripeMin, kStripeMin + 1, 1 << 20, 7, 0,
                      (3 << 20) + 5, 32, kStripeMin * 2});
    // Sends and receives interleaved with progress, so parts of later messages are
    // posted while earlier ones are in flight.
    for (size_t i = 0; i < m.size(); ++i) {
      p.a->PostSend(&m.sa[i]);
      p.b->PostRecv(&m.rb[i]);
      p.b->PostSend(&m.sb[i]);
      p.a->PostRecv(&m.ra[i]);
      ASSERT_TRUE(p.a->Progress().ok());
      ASSERT_TRUE(p.b->Progress().ok());
    }
    Status st = Pump({p.a.get(), p.b.get()}, Deadline::AfterSeconds(20));
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (size_t i = 0; i < m.size(); ++i) {
      EXPECT_TRUE(m.Done(i)) << i;
      EXPECT_EQ(m.in_a[i], m.out_b[i]) << rails << " rails, message " << i;
      EXPECT_EQ(m.in_b[i], m.out_a[i]) << rails << " rails, message " << i;
    }
    EXPECT_FALSE(p.a->Busy());
  }
}

// The bytes of a large message go over every rail, in near-equal shares; a small one
// stays on rail 0.
TEST(RailLinkTest, LargeMessagesUseEveryRail) {
  Pair p = MakePair(2);
  std::vector<uint8_t> small = Pattern(0, 1, 1000), big = Pattern(0, 1, 1 << 20);
  SendOp s1{Header(0, 1, 0, small.size()), small.data()};
  p.a->PostSend(&s1);
  ASSERT_TRUE(p.a->Progress().ok());
  int queued[2];
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(ioctl(p.b_fds[k], FIONREAD, &queued[k]), 0);
  }
  EXPECT_EQ(queued[0], 32 + 1000);
  EXPECT_EQ(queued[1], 0);

  std::vector<uint8_t> got_small(small.size()), got_big(big.size());
  RecvOp r1{Header(0, 1, 0, small.size()), got_small.data()};
  RecvOp r2{Header(0, 1, 1, big.size()), got_big.data()};
  p.b->PostRecv(&r1);
  p.b->PostRecv(&r2);
  SendOp s2{Header(0, 1, 1, big.size()), big.data()};
  p.a->PostSend(&s2);
  ASSERT_TRUE(Pump({p.a.get(), p.b.get()}, Deadline::AfterSeconds(10)).ok());
  EXPECT_EQ(got_small, small);
  EXPECT_EQ(got_big, big);
}

TEST(RailLinkTest, CountMismatchOnAStripeNamesTheRail) {
  Pair p = MakePair(2);
  std::vector<uint8_t> data = Pattern(0, 1, 1 << 20), got(2 << 20);
  SendOp s{Header(0, 4, 0, data.size()), data.data()};
  RecvOp r{Header(0, 4, 0, got.size()), got.data()};
  p.a->PostSend(&s);
  p.b->PostRecv(&r);
  Status st = Pump({p.a.get(), p.b.get()}, Deadline::AfterSeconds(10));
  EXPECT_EQ(st.code(), Code::kInvalidUsage);
  EXPECT_THAT(st.message(), HasSubstr("the ranks passed different counts"));
  EXPECT_THAT(st.message(), HasSubstr("tcp rail 0 of 2"));
  EXPECT_THAT(st.message(), HasSubstr("one stripe per rail"));
}

// Losing one rail fails the link, naming the rail and its address; later calls see the
// same error.
TEST(RailLinkTest, ALostRailFailsTheLink) {
  Pair p = MakePair(2);
  std::vector<uint8_t> got(1 << 20);
  RecvOp r{Header(0, 1, 0, got.size()), got.data()};
  p.a->PostRecv(&r);
  p.b.reset();  // closes every socket of b: rail 1 reads end-of-stream like rail 0
  Status st = Pump({p.a.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("rank 0 lost connection to rank 1 (tcp b-rail"));
  EXPECT_THAT(st.message(), HasSubstr("of 2]"));
  EXPECT_EQ(p.a->Progress().status().code(), Code::kUnavailable);
}

// The abort frame reaches the peer on whichever rail it reads.
TEST(RailLinkTest, AbortCarriesTheCause) {
  Pair p = MakePair(2);
  std::vector<uint8_t> got(1 << 20);
  RecvOp r{Header(0, 1, 0, got.size()), got.data()};
  p.a->PostRecv(&r);
  p.b->SendAbort(DeadlineExceeded("rank 1 timed out in allreduce seq 3"));
  p.b->Shutdown();
  Status st = Pump({p.a.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("rank 1 timed out in allreduce seq 3"));
}

// PollFd is one descriptor for all rails: it wakes for data on any rail that has a
// receive posted, and not for data nobody asked for yet.
TEST(RailLinkTest, PollFdWakesForAnyRail) {
  Pair p = MakePair(2);
  int fd = p.a->PollFd();
  ASSERT_GE(fd, 0);
  pollfd pfd{fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);
  std::vector<uint8_t> data = Pattern(1, 0, 1 << 20), got(1 << 20);
  SendOp s{Header(0, 1, 0, data.size()), data.data()};
  p.b->PostSend(&s);
  ASSERT_TRUE(p.b->Progress().ok());  // both stripes' first bytes are in the sockets
  pfd.fd = p.a->PollFd();
  EXPECT_EQ(poll(&pfd, 1, 0), 0) << "no receive posted: the data must wait, not wake";
  RecvOp r{Header(0, 1, 0, got.size()), got.data()};
  p.a->PostRecv(&r);
  pfd.fd = p.a->PollFd();
  EXPECT_EQ(poll(&pfd, 1, 1000), 1);
  ASSERT_TRUE(Pump({p.a.get(), p.b.get()}, Deadline::AfterSeconds(10)).ok());
  EXPECT_EQ(got, data);
}

}  // namespace
}  // namespace weft::transport::tcp
