#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "net/socket.h"

namespace weft::net {
namespace {

using namespace std::chrono_literals;

SockAddr Loopback4() { return SockAddr::Parse("127.0.0.1:0").value(); }

bool HaveIpv6Loopback() {
  auto l = Listen(SockAddr::Parse("[::1]:0").value());
  return l.ok();
}

// A listener, a connected client and the accepted server side.
struct Pair {
  Fd listener, client, server;
};

Pair MakePair(const SockAddr& where) {
  Pair p;
  auto l = Listen(where);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  p.listener = std::move(l.value());
  auto addr = LocalAddress(p.listener.get());
  EXPECT_TRUE(addr.ok());
  auto c = Connect(*addr, Deadline::AfterSeconds(5));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  p.client = std::move(c.value());
  auto s = Accept(p.listener.get(), Deadline::AfterSeconds(5));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  p.server = std::move(s.value());
  return p;
}

TEST(Fd, ClosesAndMoves) {
  int raw = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(raw, 0);
  {
    Fd a(raw);
    Fd b(std::move(a));
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), raw);
    Fd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), raw);
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed
}

TEST(Socket, ListenPicksAPort) {
  auto l = Listen(Loopback4());
  ASSERT_TRUE(l.ok());
  auto a = LocalAddress(l->get());
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->port(), 0);
  EXPECT_EQ(a->ToString().rfind("127.0.0.1:", 0), 0u);
}

TEST(Socket, ListenOnBusyPortNamesAddress) {
  auto l = Listen(Loopback4());
  ASSERT_TRUE(l.ok());
  auto a = LocalAddress(l->get()).value();
  // Both listening: SO_REUSEADDR does not allow two listeners on one port.
  auto l2 = Listen(a);
  ASSERT_FALSE(l2.ok());
  EXPECT_NE(l2.status().message().find(a.ToString()), std::string::npos)
      << l2.status().ToString();
}

TEST(Socket, RoundTripIpv4) {
  Pair p = MakePair(Loopback4());
  const char msg[] = "hello weft";
  ASSERT_TRUE(WriteFull(p.client.get(), msg, sizeof(msg), Deadline::AfterSeconds(5)).ok());
  char buf[sizeof(msg)] = {};
  ASSERT_TRUE(ReadFull(p.server.get(), buf, sizeof(buf), Deadline::AfterSeconds(5)).ok());
  EXPECT_STREQ(buf, msg);
}

TEST(Socket, RoundTripIpv6) {
  if (!HaveIpv6Loopback()) GTEST_SKIP() << "no ::1";
  Pair p = MakePair(SockAddr::Parse("[::1]:0").value());
  uint64_t x = 0x0123456789abcdefull, y = 0;
  ASSERT_TRUE(WriteFull(p.server.get(), &x, sizeof(x), Deadline::AfterSeconds(5)).ok());
  ASSERT_TRUE(ReadFull(p.client.get(), &y, sizeof(y), Deadline::AfterSeconds(5)).ok());
  EXPECT_EQ(x, y);
}

TEST(Socket, LargeTransferBothWays) {
  Pair p = MakePair(Loopback4());
  ASSERT_TRUE(SetBufferSizes(p.client.get(), 64 << 10).ok());
  std::vector<char> out(8 << 20), in(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 31 + 7);
  std::thread writer([&] {
    EXPECT_TRUE(WriteFull(p.client.get(), out.data(), out.size(), Deadline::AfterSeconds(20)).ok());
  });
  ASSERT_TRUE(ReadFull(p.server.get(), in.data(), in.size(), Deadline::AfterSeconds(20)).ok());
  writer.join();
  EXPECT_EQ(0, std::memcmp(out.data(), in.data(), out.size()));
}

TEST(Socket, WorksOnBlockingModeSockets) {
  Pair p = MakePair(Loopback4());
  ASSERT_TRUE(SetNonBlocking(p.server.get(), false).ok());
  char c = 0;
  auto start = std::chrono::steady_clock::now();
  Status s = ReadFull(p.server.get(), &c, 1, Deadline::After(200ms));
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(Socket, ReadFullReportsPeerClose) {
  Pair p = MakePair(Loopback4());
  const char half[3] = {1, 2, 3};
  ASSERT_TRUE(WriteFull(p.client.get(), half, 3, Deadline::AfterSeconds(5)).ok());
  p.client.reset();
  char buf[8];
  Status s = ReadFull(p.server.get(), buf, sizeof(buf), Deadline::AfterSeconds(5));
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("3 of 8"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:"), std::string::npos) << s.ToString();
}

TEST(Socket, WriteFullReportsPeerClose) {
  Pair p = MakePair(Loopback4());
  p.server.reset();
  std::vector<char> big(4 << 20);
  Status s = WriteFull(p.client.get(), big.data(), big.size(), Deadline::AfterSeconds(5));
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
}

TEST(Socket, ReadTimesOut) {
  Pair p = MakePair(Loopback4());
  char c;
  auto start = std::chrono::steady_clock::now();
  Status s = ReadFull(p.server.get(), &c, 1, Deadline::After(150ms));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded);
  EXPECT_GE(took, 140ms);
  EXPECT_LT(took, 2s);
}

TEST(Socket, AcceptTimesOut) {
  auto l = Listen(Loopback4());
  ASSERT_TRUE(l.ok());
  auto start = std::chrono::steady_clock::now();
  auto s = Accept(l->get(), Deadline::After(150ms));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(Socket, ConnectToClosedPortTimesOutWithinDeadline) {
  // Grab a free port, then close the listener so nothing is there.
  SockAddr addr;
  {
    auto l = Listen(Loopback4());
    ASSERT_TRUE(l.ok());
    addr = LocalAddress(l->get()).value();
  }
  auto start = std::chrono::steady_clock::now();
  auto c = Connect(addr, Deadline::After(400ms));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kDeadlineExceeded) << c.status().ToString();
  EXPECT_NE(c.status().message().find(addr.ToString()), std::string::npos);
  EXPECT_NE(c.status().message().find("refused"), std::string::npos) << c.status().ToString();
  EXPECT_GE(took, 350ms);
  EXPECT_LT(took, 1500ms);
}

TEST(Socket, ConnectRetriesUntilListenerAppears) {
  SockAddr addr;
  {
    auto l = Listen(Loopback4());
    ASSERT_TRUE(l.ok());
    addr = LocalAddress(l->get()).value();
  }
  Fd listener;
  std::thread late([&] {
    std::this_thread::sleep_for(200ms);
    auto l = Listen(addr);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    listener = std::move(l.value());
  });
  auto c = Connect(addr, Deadline::AfterSeconds(10));
  late.join();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto s = Accept(listener.get(), Deadline::AfterSeconds(5));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
}

TEST(Socket, ConnectedSocketsHaveNoDelay) {
  Pair p = MakePair(Loopback4());
  for (int fd : {p.client.get(), p.server.get()}) {
    int v = 0;
    socklen_t len = sizeof(v);
    ASSERT_EQ(0, ::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len));
    EXPECT_NE(v, 0);
  }
}

TEST(Socket, OptionsOnBadFdFail) {
  EXPECT_EQ(SetNonBlocking(-1, true).code(), Code::kSystemError);
  EXPECT_EQ(SetNoDelay(-1).code(), Code::kSystemError);
  EXPECT_EQ(SetBufferSizes(-1, 1 << 20).code(), Code::kSystemError);
}

}  // namespace
}  // namespace weft::net
