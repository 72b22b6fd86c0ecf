#include <gtest/gtest.h>
#include <netinet/in.h>

#include "net/ifname_spec.h"
#include "net/socket.h"

namespace weft::net {
namespace {

TEST(IfnameSpec, PrefixInclude) {
  auto s = ParseIfnameSpec("eth,ib");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->exclude);
  EXPECT_FALSE(s->exact);
  EXPECT_TRUE(IfnameMatches(*s, "eth0"));
  EXPECT_TRUE(IfnameMatches(*s, "ib1"));
  EXPECT_FALSE(IfnameMatches(*s, "lo"));
  EXPECT_FALSE(IfnameMatches(*s, "et"));
}

TEST(IfnameSpec, Exclude) {
  auto s = ParseIfnameSpec("^docker,lo");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->exclude);
  EXPECT_FALSE(IfnameMatches(*s, "docker0"));
  EXPECT_FALSE(IfnameMatches(*s, "lo"));
  EXPECT_TRUE(IfnameMatches(*s, "eth0"));
}

TEST(IfnameSpec, Exact) {
  auto s = ParseIfnameSpec("=eth0,ib1");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->exact);
  EXPECT_TRUE(IfnameMatches(*s, "eth0"));
  EXPECT_FALSE(IfnameMatches(*s, "eth01"));
  EXPECT_TRUE(IfnameMatches(*s, "ib1"));
}

TEST(IfnameSpec, ExcludeExact) {
  auto s = ParseIfnameSpec("^=eth0");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(IfnameMatches(*s, "eth0"));
  EXPECT_TRUE(IfnameMatches(*s, "eth01"));
}

TEST(IfnameSpec, RejectsEmpty) {
  for (const char* s : {"", "^", "=", "^=", ",,"}) EXPECT_FALSE(ParseIfnameSpec(s).ok()) << s;
}

TEST(Family, Parses) {
  EXPECT_EQ(ParseFamily("").value(), AF_UNSPEC);
  EXPECT_EQ(ParseFamily("AF_INET").value(), AF_INET);
  EXPECT_EQ(ParseFamily("inet6").value(), AF_INET6);
  auto bad = ParseFamily("AF_UNIX");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("WEFT_SOCKET_FAMILY"), std::string::npos);
}

TEST(SelectInterfaces, LoopbackByPrefix) {
  auto r = SelectInterfaces("lo", "AF_INET");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "lo");
  EXPECT_EQ((*r)[0].addr.ToString(), "127.0.0.1:0");
}

TEST(SelectInterfaces, OneAddressPerInterfacePreferringIpv4) {
  auto r = SelectInterfaces("=lo", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].addr.family(), AF_INET);
}

TEST(SelectInterfaces, Ipv6Loopback) {
  auto r = SelectInterfaces("=lo", "AF_INET6");
  if (!r.ok()) GTEST_SKIP() << "no ::1 here: " << r.status().ToString();
  EXPECT_EQ((*r)[0].addr.ToString(), "[::1]:0");
}

TEST(SelectInterfaces, ExclusionNeverReturnsExcluded) {
  auto r = SelectInterfaces("^lo", "");
  if (!r.ok()) GTEST_SKIP() << "only loopback here";
  for (const auto& i : *r) EXPECT_NE(i.name, "lo");
}

TEST(SelectInterfaces, DefaultIsNonEmpty) {
  auto r = SelectInterfaces("", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->empty());
  for (const auto& i : *r) EXPECT_EQ(i.name.rfind("docker", 0), std::string::npos);
}

TEST(SelectInterfaces, NothingSelectedListsInterfaces) {
  auto r = SelectInterfaces("=weft-no-such-if0", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("weft-no-such-if0"), std::string::npos) << m;
  EXPECT_NE(m.find("lo (127.0.0.1"), std::string::npos) << m;
}

TEST(SelectInterfaces, BadFamilyIsAnError) {
  auto r = SelectInterfaces("lo", "AF_PACKET");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace weft::net
