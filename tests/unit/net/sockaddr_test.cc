#include <gtest/gtest.h>
#include <netinet/in.h>

#include "net/socket.h"

namespace weft::net {
namespace {

TEST(SockAddr, ParsesIpv4WithPort) {
  auto a = SockAddr::Parse("127.0.0.1:5678");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->family(), AF_INET);
  EXPECT_EQ(a->port(), 5678);
  EXPECT_EQ(a->ToString(), "127.0.0.1:5678");
}

TEST(SockAddr, ParsesIpv4WithoutPort) {
  auto a = SockAddr::Parse("10.1.2.3");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port(), 0);
  EXPECT_EQ(a->ToString(), "10.1.2.3:0");
}

TEST(SockAddr, ParsesBracketedIpv6) {
  auto a = SockAddr::Parse("[::1]:29500");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->family(), AF_INET6);
  EXPECT_EQ(a->port(), 29500);
  EXPECT_EQ(a->ToString(), "[::1]:29500");
}

TEST(SockAddr, ParsesBareIpv6AsPortZero) {
  auto a = SockAddr::Parse("fd00::2");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->family(), AF_INET6);
  EXPECT_EQ(a->port(), 0);
  EXPECT_EQ(a->ToString(), "[fd00::2]:0");
}

TEST(SockAddr, KeepsIpv6ScopeId) {
  // "lo" always exists, so a numeric scope on it resolves everywhere.
  auto a = SockAddr::Parse("[fe80::1%lo]:7");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto* a6 = reinterpret_cast<const sockaddr_in6*>(&a->storage);
  EXPECT_NE(a6->sin6_scope_id, 0u);
  EXPECT_EQ(a->ToString(), "[fe80::1%lo]:7");
}

TEST(SockAddr, RoundTrips) {
  for (const char* s : {"127.0.0.1:1", "0.0.0.0:65535", "[::]:0", "[::1]:80",
                        "[2001:db8::5]:4242", "192.168.10.20:29500"}) {
    auto a = SockAddr::Parse(s);
    ASSERT_TRUE(a.ok()) << s << ": " << a.status().ToString();
    EXPECT_EQ(a->ToString(), s);
    auto b = SockAddr::Parse(a->ToString());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->ToString(), s);
  }
}

TEST(SockAddr, ResolvesLocalhost) {
  auto a = SockAddr::Parse("localhost:1234");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->port(), 1234);
  EXPECT_TRUE(a->family() == AF_INET || a->family() == AF_INET6);
}

TEST(SockAddr, FromHostPort) {
  auto a = SockAddr::FromHostPort("127.0.0.1", 9);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->ToString(), "127.0.0.1:9");
  auto b = SockAddr::FromHostPort("[::1]", 10);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ToString(), "[::1]:10");
}

TEST(SockAddr, SetPort) {
  auto a = SockAddr::Parse("127.0.0.1:1");
  ASSERT_TRUE(a.ok());
  a->set_port(4321);
  EXPECT_EQ(a->ToString(), "127.0.0.1:4321");
}

TEST(SockAddr, RejectsMalformed) {
  for (const char* s : {"", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:12a", "127.0.0.1:-1",
                        "[::1", "[::1]x", "[::1]:", "[]:80", ":80", "127.0.0.1:+5",
                        "no-such-host.invalid:80"}) {
    auto a = SockAddr::Parse(s);
    EXPECT_FALSE(a.ok()) << "accepted '" << s << "'";
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), Code::kInvalidArgument) << s << ": " << a.status().ToString();
    }
  }
}

TEST(SockAddr, EmptyFormatsAsNoAddress) {
  SockAddr a;
  EXPECT_EQ(a.ToString(), "<no address>");
  EXPECT_EQ(a.port(), 0);
}

}  // namespace
}  // namespace weft::net
