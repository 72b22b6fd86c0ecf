// Data-socket settings: TCP keep-alive from WEFT_TCP_KEEPALIVE on a real loopback
// connection (the behaviour under a vanished peer is tests/netns/partition_test.sh).
#include "transport/tcp/tcp_setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "net/socket.h"

namespace weft::transport::tcp {
namespace {

using ::testing::HasSubstr;

int GetOpt(int fd, int level, int opt) {
  int v = -1;
  socklen_t len = sizeof(v);
  EXPECT_EQ(getsockopt(fd, level, opt, &v, &len), 0);
  return v;
}

net::Fd ConnectedSocket(net::Fd& accepted) {
  auto addr = net::SockAddr::Parse("127.0.0.1:0");
  EXPECT_TRUE(addr.ok());
  auto listener = net::Listen(*addr);
  EXPECT_TRUE(listener.ok()) << listener.status().ToString();
  auto local = net::LocalAddress(listener->get());
  auto fd = net::Connect(*local, Deadline::AfterSeconds(5));
  EXPECT_TRUE(fd.ok()) << fd.status().ToString();
  auto a = net::Accept(listener->get(), Deadline::AfterSeconds(5));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  accepted = std::move(a).value();
  return std::move(fd).value();
}

TEST(TcpSetupTest, KeepAliveFollowsTheEnvironment) {
  net::Fd peer;
  net::Fd fd = ConnectedSocket(peer);
  // What the mesh does once for all its sockets: read the variable, then tune each one.
  auto tune = [&fd] {
    Result<int> s = KeepAliveFromEnv();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(TuneDataSocket(fd.get(), s.value()).ok());
  };

  unsetenv("WEFT_TCP_KEEPALIVE");
  tune();
  EXPECT_EQ(GetOpt(fd.get(), SOL_SOCKET, SO_KEEPALIVE), 1);
  KeepAliveTimes d = KeepAliveTimesFor(kDefaultKeepAliveS);
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPIDLE), d.idle_s);
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPINTVL), d.interval_s);
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPCNT), d.probes);

  setenv("WEFT_TCP_KEEPALIVE", "12", 1);
  tune();
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPIDLE), 6);
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPINTVL), 2);
  EXPECT_EQ(GetOpt(fd.get(), IPPROTO_TCP, TCP_KEEPCNT), 3);

  setenv("WEFT_TCP_KEEPALIVE", "0", 1);
  tune();
  EXPECT_EQ(GetOpt(fd.get(), SOL_SOCKET, SO_KEEPALIVE), 0);

  for (const char* bad : {"-1", "soon", "100000"}) {
    setenv("WEFT_TCP_KEEPALIVE", bad, 1);
    Result<int> s = KeepAliveFromEnv();
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr("WEFT_TCP_KEEPALIVE")) << bad;
  }
  unsetenv("WEFT_TCP_KEEPALIVE");
}

TEST(TcpSetupTest, KeepAliveTimesStayPositiveAndNearTheBound) {
  for (int s : {1, 2, 3, 4, 10, 60, 3600}) {
    KeepAliveTimes t = KeepAliveTimesFor(s);
    EXPECT_GE(t.idle_s, 1);
    EXPECT_GE(t.interval_s, 1);
    int total = t.idle_s + t.interval_s * t.probes;
    EXPECT_LE(total, std::max(4, s + s / 2)) << s;  // detection takes about `s` seconds
  }
}

}  // namespace
}  // namespace weft::transport::tcp
