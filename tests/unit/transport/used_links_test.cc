// Which links a rank uses to other hosts: interfaces behind connection source addresses
// (tcp) or an ofi domain, with speeds from a fake sysfs tree or the provider.
#include "transport/used_links.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace weft::transport {
namespace {

class UsedLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/weft_used_links_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Speed(const std::string& ifname, const std::string& text) {
    std::filesystem::create_directories(root_ + "/net/" + ifname);
    std::ofstream(root_ + "/net/" + ifname + "/speed") << text;
  }
  static net::SockAddr Addr(const char* text) { return net::SockAddr::Parse(text).value(); }
  std::string root_;
};

TEST_F(UsedLinksTest, OneEntryPerInterfaceWithItsSysfsSpeed) {
  Speed("lo", "10000\n");
  // Two connections leaving by loopback (two peers, or two rails on one path): one link.
  auto links = TcpUsedLinks({Addr("127.0.0.1:0"), Addr("127.0.0.1:0")}, root_);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].name, "lo");
  EXPECT_EQ(links[0].mbps, 10000);
  EXPECT_EQ(links[0].source, "sysfs");
}

TEST_F(UsedLinksTest, UnknownSpeedAndVanishedAddress) {
  Speed("lo", "-1\n");
  auto links = TcpUsedLinks({Addr("127.0.0.1:0"), Addr("192.0.2.9:0")}, root_);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].name, "lo");
  EXPECT_LT(links[0].mbps, 0);
  EXPECT_EQ(links[0].source, "");
  EXPECT_EQ(links[1].name, "192.0.2.9:0");  // no interface holds it
  EXPECT_LT(links[1].mbps, 0);
  EXPECT_TRUE(TcpUsedLinks({}, root_).empty());
}

TEST_F(UsedLinksTest, OfiPrefersTheProviderThenSysfs) {
  Speed("eth1", "25000\n");
  UsedLink from_nic = OfiUsedLink("rdmap16s27-rdm", 100000, root_);
  EXPECT_EQ(from_nic.name, "ofi:rdmap16s27-rdm");
  EXPECT_EQ(from_nic.mbps, 100000);
  EXPECT_EQ(from_nic.source, "libfabric");
  UsedLink from_sysfs = OfiUsedLink("eth1", -1, root_);  // tcp provider: domain = interface
  EXPECT_EQ(from_sysfs.mbps, 25000);
  EXPECT_EQ(from_sysfs.source, "sysfs");
  UsedLink unknown = OfiUsedLink("rdmap16s27-rdm", -1, root_);
  EXPECT_LT(unknown.mbps, 0);
  EXPECT_LT(OfiUsedLink("../../etc", -1, root_).mbps, 0);
}

}  // namespace
}  // namespace weft::transport
