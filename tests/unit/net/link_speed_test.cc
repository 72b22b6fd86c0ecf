// Interface speeds from sysfs: every value that is not a plain positive number is
// unknown, never an error or a crash, read from a fake tree in a temporary directory.
#include "net/link_speed.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "net/socket.h"

namespace weft::net {
namespace {

TEST(ParseSysfsSpeed, PlainNumbers) {
  EXPECT_EQ(ParseSysfsSpeedMbps("10000\n"), 10000);
  EXPECT_EQ(ParseSysfsSpeedMbps("100000"), 100000);
  EXPECT_EQ(ParseSysfsSpeedMbps("  25000 \n"), 25000);
  EXPECT_EQ(ParseSysfsSpeedMbps("1"), 1);
  EXPECT_EQ(ParseSysfsSpeedMbps("1000000000"), 1000000000);  // the largest accepted
}

TEST(ParseSysfsSpeed, EverythingElseIsUnknown) {
  for (const char* text :
       {"-1\n", "-1", "0\n", "", "\n", "   ", "fast", "10000 Mb/s", "1e4", "+100", "10.5", "0x10",
        "1000000001", "99999999999999999999999", "10000\n20000\n", "\xff\xfe"}) {
    EXPECT_EQ(ParseSysfsSpeedMbps(text), std::nullopt) << "'" << text << "'";
  }
  // An embedded NUL is not whitespace.
  EXPECT_EQ(ParseSysfsSpeedMbps(std::string_view("100\0", 4)), std::nullopt);
}

// A fake /sys/class: <dir>/net/<if>/speed files with the given contents.
class FakeSysClass : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/weft_sysfs_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Speed(const std::string& ifname, const std::string& text) {
    std::filesystem::create_directories(root_ + "/net/" + ifname);
    std::ofstream(root_ + "/net/" + ifname + "/speed", std::ios::binary) << text;
  }
  std::string root_;
};

TEST_F(FakeSysClass, ReadsKnownSpeeds) {
  Speed("eth0", "10000\n");
  Speed("efa0", "100000\n");
  EXPECT_EQ(ReadInterfaceSpeedMbps(root_, "eth0"), 10000);
  EXPECT_EQ(ReadInterfaceSpeedMbps(root_, "efa0"), 100000);
}

TEST_F(FakeSysClass, BadValuesAreUnknown) {
  Speed("veth0", "-1\n");  // virtual devices
  Speed("junk0", "garbage\n");
  Speed("empty0", "");
  Speed("long0", std::string(4096, '1'));                          // far longer than any speed file
  std::filesystem::create_directories(root_ + "/net/nospeed0");    // device without the file
  std::filesystem::create_directories(root_ + "/net/dir0/speed");  // a directory, not a file
  for (const char* name : {"veth0", "junk0", "empty0", "long0", "nospeed0", "dir0", "absent0"})
    EXPECT_EQ(ReadInterfaceSpeedMbps(root_, name), std::nullopt) << name;
}

TEST_F(FakeSysClass, NamesThatLeaveTheTreeAreRefused) {
  Speed("eth0", "10000\n");
  std::ofstream(root_ + "/speed") << "10000\n";  // what "net/.." would reach
  for (const char* name : {"", ".", "..", "../eth0", "eth0/..", "/eth0"})
    EXPECT_EQ(ReadInterfaceSpeedMbps(root_, name), std::nullopt) << "'" << name << "'";
}

TEST_F(FakeSysClass, MissingTreeIsUnknown) {
  EXPECT_EQ(ReadInterfaceSpeedMbps(root_ + "/nonexistent", "eth0"), std::nullopt);
}

TEST(InterfaceWithAddress, FindsLoopbackAndNothingForAForeignAddress) {
  SockAddr lo = SockAddr::Parse("127.0.0.1:4321").value();  // the port does not matter
  EXPECT_EQ(InterfaceWithAddress(lo), "lo");
  // TEST-NET-1 (RFC 5737): no host holds it.
  EXPECT_EQ(InterfaceWithAddress(SockAddr::Parse("192.0.2.77:1").value()), std::nullopt);
}

}  // namespace
}  // namespace weft::net
