// The ofi transport's choices from names: which providers WEFT_TRANSPORT=auto uses, and
// which domain (NIC) each local rank opens (nic_choice.h). No libfabric involved.
#ifdef WEFT_HAVE_OFI

#include "transport/ofi/nic_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace weft::transport::ofi {
namespace {

using ::testing::HasSubstr;

TEST(AutoPicksProviderTest, RealFabricsOnly) {
  EXPECT_TRUE(AutoPicksProvider("efa"));
  EXPECT_TRUE(AutoPicksProvider("efa;ofi_rxr"));  // older libfabrics layer efa this way
  EXPECT_TRUE(AutoPicksProvider("verbs;ofi_rxm"));
  // Over the kernel's sockets or memory weft's own tcp and shm links are as fast or faster.
  EXPECT_FALSE(AutoPicksProvider("tcp;ofi_rxm"));
  EXPECT_FALSE(AutoPicksProvider("tcp"));
  EXPECT_FALSE(AutoPicksProvider("udp;ofi_rxd"));
  EXPECT_FALSE(AutoPicksProvider("sockets"));
  EXPECT_FALSE(AutoPicksProvider("shm"));
  EXPECT_FALSE(AutoPicksProvider("verbs"));  // no FI_EP_RDM without rxm
  EXPECT_FALSE(AutoPicksProvider("efax"));
  EXPECT_FALSE(AutoPicksProvider(""));
}

const std::vector<std::string> kP4d = {"rdmap16s27-rdm", "rdmap32s27-rdm", "rdmap144s27-rdm",
                                       "rdmap160s27-rdm"};

TEST(ChooseDomainTest, LocalRanksGoRoundRobinOverTheOfferedDomains) {
  // 8 ranks of a p4d node over its 4 NICs: two ranks per NIC, neighbours apart.
  for (int i = 0; i < 8; ++i) {
    Result<std::string> d = ChooseDomain(kP4d, {}, i);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d.value(), kP4d[i % 4]) << "local index " << i;
  }
  EXPECT_EQ(ChooseDomain(kP4d, {}, -1).value(), kP4d[0]);  // unknown counts as 0
}

TEST(ChooseDomainTest, DuplicatesCountOnce) {
  // The tcp provider lists a domain once per address family and fabric.
  const std::vector<std::string> tcp = {"rail0", "rail0", "rail1", "rail0", "rail1"};
  EXPECT_EQ(ChooseDomain(tcp, {}, 0).value(), "rail0");
  EXPECT_EQ(ChooseDomain(tcp, {}, 1).value(), "rail1");
  EXPECT_EQ(ChooseDomain(tcp, {}, 2).value(), "rail0");
  EXPECT_EQ(ChooseDomain({"eth0"}, {}, 5).value(), "eth0");
}

TEST(ChooseDomainTest, PinnedListIsUsedInItsOrder) {
  const std::vector<std::string> pinned = {"rdmap144s27-rdm", "rdmap16s27-rdm"};
  EXPECT_EQ(ChooseDomain(kP4d, pinned, 0).value(), "rdmap144s27-rdm");
  EXPECT_EQ(ChooseDomain(kP4d, pinned, 1).value(), "rdmap16s27-rdm");
  EXPECT_EQ(ChooseDomain(kP4d, pinned, 2).value(), "rdmap144s27-rdm");
  EXPECT_EQ(ChooseDomain(kP4d, pinned, 7).value(), "rdmap16s27-rdm");
}

TEST(ChooseDomainTest, APinnedNameNotOfferedQuotesWhatIs) {
  Result<std::string> d = ChooseDomain({"rail0", "rail0", "rail1"}, {"rail1", "eth9"}, 0);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(d.status().message(), HasSubstr("WEFT_OFI_DOMAIN names 'eth9'"));
  EXPECT_THAT(d.status().message(), HasSubstr("it offers 'rail0', 'rail1'"));
}

TEST(ChooseDomainTest, NothingOfferedIsAnError) {
  EXPECT_FALSE(ChooseDomain({}, {}, 0).ok());
  Result<std::string> d = ChooseDomain({}, {"eth0"}, 0);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("offers no domain"));
}

TEST(ParseDomainListTest, CommaSeparatedNames) {
  EXPECT_TRUE(ParseDomainList("").value().empty());
  EXPECT_EQ(ParseDomainList("eth0").value(), std::vector<std::string>{"eth0"});
  EXPECT_EQ(ParseDomainList("a,b,c").value(), (std::vector<std::string>{"a", "b", "c"}));
  for (const char* bad : {"a,,b", ",a", "a,", ","}) {
    Result<std::vector<std::string>> l = ParseDomainList(bad);
    ASSERT_FALSE(l.ok()) << bad;
    EXPECT_EQ(l.status().code(), Code::kInvalidArgument);
    EXPECT_THAT(l.status().message(), HasSubstr("WEFT_OFI_DOMAIN"));
  }
}

TEST(RdmaDevicePresentTest, AnEntryUnderInfinibandCounts) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("weft_sysclass_" + std::to_string(getpid()));
  fs::remove_all(dir);
  EXPECT_FALSE(RdmaDevicePresent(dir.string()));  // no such folder
  fs::create_directories(dir / "infiniband");
  EXPECT_FALSE(RdmaDevicePresent(dir.string()));  // the class, but no device
  fs::create_directories(dir / "infiniband" / "rdmap16s27");
  EXPECT_TRUE(RdmaDevicePresent(dir.string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace weft::transport::ofi

#endif  // WEFT_HAVE_OFI
