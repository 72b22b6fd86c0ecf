// TcpLink over a socketpair: the framing, checks and error paths, without the network.
#include "transport/tcp/tcp_link.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
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

struct Pair {
  std::unique_ptr<TcpLink> a, b;
};

Pair MakePair() {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  return Pair{std::make_unique<TcpLink>(0, 1, net::Fd(fds[0]), "peer-b"),
              std::make_unique<TcpLink>(1, 0, net::Fd(fds[1]), "peer-a")};
}

// One end as a link (rank 0, peer 1), the other as a raw socket to inject bytes.
std::pair<std::unique_ptr<TcpLink>, net::Fd> LinkAndRaw() {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  return {std::make_unique<TcpLink>(0, 1, net::Fd(fds[0]), "10.9.8.7:4312"), net::Fd(fds[1])};
}

TEST(TcpLinkTest, ManyMessagesOfAllSizesBothWays) {
  Pair p = MakePair();
  EXPECT_EQ(p.a->PollFd() >= 0, true);
  TwoWayMessages m({0, 0, 1, 31, 32, 33, 4095, 1 << 20, 0, 3 << 20, 7});
  for (size_t i = 0; i < m.size(); ++i) {
    p.a->PostSend(&m.sa[i]);
    p.b->PostSend(&m.sb[i]);
  }
  EXPECT_TRUE(p.a->WantsWrite());
  for (size_t i = 0; i < m.size(); ++i) {
    p.a->PostRecv(&m.ra[i]);
    p.b->PostRecv(&m.rb[i]);
  }
  Status st = Pump({p.a.get(), p.b.get()}, Deadline::AfterSeconds(10));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(p.a->WantsWrite());
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_TRUE(m.Done(i)) << i;
    EXPECT_EQ(m.in_a[i], m.out_b[i]) << i;
    EXPECT_EQ(m.in_b[i], m.out_a[i]) << i;
  }
}

// A message that arrives before its RecvOp is left in the socket, not lost.
TEST(TcpLinkTest, EarlyMessageWaitsForItsRecv) {
  Pair p = MakePair();
  std::vector<uint8_t> data = Pattern(0, 1, 1000), got(1000);
  SendOp s{Header(0, 1, 0, 1000), data.data()};
  p.a->PostSend(&s);
  ASSERT_TRUE(Pump({p.a.get()}, Deadline::AfterSeconds(5)).ok());
  EXPECT_FALSE(p.b->Progress().value());  // nothing posted: nothing read
  RecvOp r{Header(0, 1, 0, 1000), got.data()};
  p.b->PostRecv(&r);
  ASSERT_TRUE(Pump({p.b.get()}, Deadline::AfterSeconds(5)).ok());
  EXPECT_EQ(got, data);
}

TEST(TcpLinkTest, GarbageIsProtocolError) {
  auto [link, raw] = LinkAndRaw();
  char junk[32];
  for (int i = 0; i < 32; ++i) junk[i] = static_cast<char>(i * 37 + 1);
  ASSERT_EQ(write(raw.get(), junk, sizeof(junk)), 32);
  std::vector<uint8_t> got(64);
  RecvOp r{Header(0, 1, 0, 64), got.data()};
  link->PostRecv(&r);
  Status st = Pump({link.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kProtocolError);
  EXPECT_THAT(st.message(), HasSubstr("rank 0 received garbage from rank 1 (tcp 10.9.8.7:4312)"));
  EXPECT_EQ(got, std::vector<uint8_t>(64, 0));  // nothing landed in the user's buffer
}

TEST(TcpLinkTest, HeaderMismatchIsInvalidUsageNamingBoth) {
  auto [link, raw] = LinkAndRaw();
  WireHeader h = Header(2, 7, 0, 1024);
  ASSERT_EQ(write(raw.get(), &h, sizeof(h)), 32);
  std::vector<uint8_t> got(4096);
  RecvOp r{Header(0, 7, 2, 4096), got.data()};
  link->PostRecv(&r);
  Status st = Pump({link.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kInvalidUsage);
  EXPECT_EQ(st.message(),
            "rank 0 expected allreduce seq 7 step 2 float32/sum 4096 bytes from rank 1, but rank "
            "1 sent broadcast seq 7 step 0 float32/sum 1024 bytes: the ranks called different "
            "collectives");
}

TEST(TcpLinkTest, PeerClosedIsUnavailable) {
  auto [link, raw] = LinkAndRaw();
  raw.reset();
  std::vector<uint8_t> got(8);
  RecvOp r{Header(0, 1, 0, 8), got.data()};
  link->PostRecv(&r);
  Status st = Pump({link.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "rank 0 lost connection to rank 1 (tcp 10.9.8.7:4312): peer closed");
  // Sticky.
  EXPECT_EQ(link->Progress().status().code(), Code::kUnavailable);
}

TEST(TcpLinkTest, PeerClosedMidMessageAndOnSend) {
  {
    auto [link, raw] = LinkAndRaw();
    WireHeader h = Header(0, 1, 0, 100);
    ASSERT_EQ(write(raw.get(), &h, sizeof(h)), 32);
    ASSERT_EQ(write(raw.get(), "abc", 3), 3);
    raw.reset();
    std::vector<uint8_t> got(100);
    RecvOp r{h, got.data()};
    link->PostRecv(&r);
    Status st = Pump({link.get()}, Deadline::AfterSeconds(5));
    EXPECT_EQ(st.code(), Code::kUnavailable);
    EXPECT_THAT(st.message(), HasSubstr("peer closed in the middle of a message"));
  }
  {
    auto [link, raw] = LinkAndRaw();
    raw.reset();
    std::vector<uint8_t> data(100);
    SendOp s{Header(0, 1, 0, 100), data.data()};
    link->PostSend(&s);
    Status st = Pump({link.get()}, Deadline::AfterSeconds(5));
    EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("rank 0 lost connection to rank 1 (tcp 10.9.8.7:4312)"));
  }
}

TEST(TcpLinkTest, AbortFrameCarriesTheCauseToAPendingReceive) {
  Pair p = MakePair();
  // A message already queued is delivered first; the frame then ends the link.
  std::vector<uint8_t> data = Pattern(0, 1, 100), got(100), more(10);
  SendOp s{Header(0, 1, 0, 100), data.data()};
  p.a->PostSend(&s);
  ASSERT_TRUE(Pump({p.a.get()}, Deadline::AfterSeconds(5)).ok());
  p.a->SendAbort(Unavailable("rank 0 lost connection to rank 3 (shm): rank 3 (pid 42) died"));
  p.a->Shutdown();
  RecvOp r{Header(0, 1, 0, 100), got.data()};
  RecvOp r2{Header(0, 1, 1, 10), more.data()};
  p.b->PostRecv(&r);
  p.b->PostRecv(&r2);
  Status st = Pump({p.b.get()}, Deadline::AfterSeconds(5));
  EXPECT_TRUE(r.done);
  EXPECT_EQ(got, data);
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("rank 1 was told by rank 0 (tcp peer-a) that it failed"));
  EXPECT_THAT(st.message(), HasSubstr("rank 3 (pid 42) died"));
}

TEST(TcpLinkTest, AbortFrameReachesARankThatOnlySends) {
  // Rank 1 is blocked sending to rank 0 (nobody reads); rank 0 fails. Rank 1's send
  // then fails, and its error still carries rank 0's cause.
  Pair p = MakePair();
  std::vector<uint8_t> big(8 << 20);
  SendOp s{Header(0, 1, 0, big.size()), big.data()};
  p.b->PostSend(&s);
  ASSERT_TRUE(p.b->Progress().ok());
  EXPECT_FALSE(s.done);  // more than the socket buffers hold
  p.a->SendAbort(DeadlineExceeded("rank 0: allreduce seq 9 timed out (WEFT_TIMEOUT)"));
  p.a.reset();  // closes with unread data: the peer sees a reset
  Status st = Pump({p.b.get()}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("allreduce seq 9 timed out")) << st.ToString();
}

TEST(TcpLinkTest, AbortFrameWaitsForTheMessageInProgress) {
  // Half a message is out: the frame must not land inside its payload. If the socket
  // takes the rest now, the message is finished first and then the frame follows.
  Pair p = MakePair();
  std::vector<uint8_t> data = Pattern(0, 1, 300000), got(300000), more(4);
  SendOp s{Header(0, 1, 0, data.size()), data.data()};
  p.a->PostSend(&s);
  ASSERT_TRUE(p.a->Progress().ok());
  RecvOp r{Header(0, 1, 0, data.size()), got.data()};
  RecvOp r2{Header(0, 1, 1, 4), more.data()};
  p.b->PostRecv(&r);
  p.b->PostRecv(&r2);
  Status st;
  for (int i = 0; i < 1000 && !r.done && st.ok(); ++i) {
    // Drain a little at a time so the sender is mid-message when it aborts.
    if (i == 1 && !s.done) p.a->SendAbort(Internal("rank 0: boom"));
    Result<bool> m = p.b->Progress();
    if (!m.ok()) st = m.status();
    Result<bool> n = p.a->Progress();
    (void)n;
  }
  p.a->Shutdown();
  if (st.ok()) st = Pump({p.b.get()}, Deadline::AfterSeconds(5));
  // Either the message completed and the frame followed, or (socket full) no frame was
  // sent and the receiver sees a plain close; never a garbled header.
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  if (r.done) {
    EXPECT_EQ(got, data);
  }
}

}  // namespace
}  // namespace weft::transport::tcp
