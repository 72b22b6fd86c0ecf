// The tcp listener binds the interfaces it advertises and nothing else.
#include <gtest/gtest.h>

#include <cstdlib>

#include "net/socket.h"
#include "transport/tcp/tcp_setup.h"

namespace weft::transport::tcp {
namespace {

TEST(TcpListenerTest, LoopbackOnlyJobListensOnLoopbackOnly) {
  // Another local address (if this host has one) must not reach a listener that
  // WEFT_SOCKET_IFNAME restricted to loopback.
  auto all = net::SelectInterfaces("", "AF_INET");
  ::setenv("WEFT_SOCKET_IFNAME", "=lo", 1);
  ::setenv("WEFT_SOCKET_FAMILY", "AF_INET", 1);
  auto l = OpenListener(0);
  ::unsetenv("WEFT_SOCKET_IFNAME");
  ::unsetenv("WEFT_SOCKET_FAMILY");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->addrs.size(), 1u);
  EXPECT_TRUE(IsLoopback(l->addrs[0]));
  ASSERT_EQ(l->fds.size(), 1u);
  // Loopback reaches it.
  EXPECT_TRUE(net::Connect(l->addrs[0], Deadline::AfterSeconds(5)).ok());
  if (!all.ok() || all->empty() || IsLoopback(all->front().addr))
    GTEST_SKIP() << "no non-loopback IPv4 interface to try";
  net::SockAddr other = all->front().addr;
  other.set_port(l->addrs[0].port());
  auto c = net::Connect(other, Deadline::AfterSeconds(0.3));
  EXPECT_FALSE(c.ok()) << "the listener answered on " << other.ToString();
}

TEST(TcpListenerTest, EveryAdvertisedAddressListensOnOnePort) {
  auto l = OpenListener(0);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->fds.size(), l->addrs.size());
  for (const net::SockAddr& a : l->addrs) {
    EXPECT_EQ(a.port(), l->addrs[0].port());
    EXPECT_TRUE(net::Connect(a, Deadline::AfterSeconds(5)).ok()) << a.ToString();
  }
}

}  // namespace
}  // namespace weft::transport::tcp
