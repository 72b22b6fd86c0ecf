// The ofi transport's choices from names: which providers WEFT_TRANSPORT=auto uses, and
// which domain (NIC) each local rank opens (nic_choice.h). No libfabric involved.
#ifdef WEFT_HAVE_OFI

#include "transport/ofi/nic_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
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

TEST(ParseCpuListTest, RangesAndSingles) {
  EXPECT_EQ(ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(ParseCpuList("5"), (std::vector<int>{5}));
  EXPECT_EQ(ParseCpuList("3,1-2,2"), (std::vector<int>{1, 2, 3}));  // sorted, once each
  EXPECT_EQ(ParseCpuList(""), (std::vector<int>{}));
}

TEST(ParseCpuListTest, MalformedIsRefused) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1-2-3", "1 2", "0-99999999", ","})
    EXPECT_EQ(ParseCpuList(bad), std::nullopt) << bad;
}

// A fake /sys/class: two RDMA devices on two NUMA nodes, one interface with a PCI
// device, one virtual interface (no device folder).
class NicLocalCpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weft_nic_cpus_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Write("infiniband/rdmap16s27/device/local_cpulist", "0-23,48-71\n");
    Write("infiniband/rdmap32s27/device/local_cpulist", "24-47,72-95\n");
    Write("net/eth1/device/local_cpulist", "24-47\n");
    Write("infiniband/broken0/device/local_cpulist", "zz\n");
    std::filesystem::create_directories(dir_ / "net" / "veth0");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(NicLocalCpusTest, EfaVerbsAndIpDomainsFindTheirDevice) {
  const std::string sys = dir_.string();
  EXPECT_EQ(NicLocalCpus(sys, "rdmap16s27-rdm").size(), 48u);          // efa RDM domain
  EXPECT_EQ(NicLocalCpus(sys, "rdmap32s27-dgrm").front(), 24);         // efa datagram domain
  EXPECT_EQ(NicLocalCpus(sys, "rdmap32s27").back(), 95);               // verbs: the device itself
  EXPECT_EQ(NicLocalCpus(sys, "eth1"), ParseCpuList("24-47"));         // IP: the interface
  EXPECT_TRUE(NicLocalCpus(sys, "veth0").empty());                     // virtual: unknown
  EXPECT_TRUE(NicLocalCpus(sys, "mlx5_9").empty());                    // absent
  EXPECT_TRUE(NicLocalCpus(sys, "broken0").empty());                   // unreadable list
  EXPECT_TRUE(NicLocalCpus(sys, "../infiniband/rdmap16s27").empty());  // not a name
}

TEST(NearDomainsTest, ABoundRankKeepsToItsNumaNodesNics) {
  const std::vector<std::string> offered = {"a", "b", "c", "d"};
  const std::vector<std::vector<int>> cpus = {{0, 1}, {0, 1}, {2, 3}, {2, 3}};
  EXPECT_EQ(NearDomains(offered, cpus, {2}), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(NearDomains(offered, cpus, {0, 1}), (std::vector<std::string>{"a", "b"}));
  // Not bound: every NIC is near, so the round robin is over all of them as before.
  EXPECT_EQ(NearDomains(offered, cpus, {0, 1, 2, 3}), offered);
  // The local ranks of each node then spread over that node's NICs.
  EXPECT_EQ(ChooseDomain(NearDomains(offered, cpus, {3}), {}, 5).value(), "d");
}

TEST(NearDomainsTest, NothingKnownOrNothingNearKeepsEveryDomain) {
  const std::vector<std::string> offered = {"a", "b"};
  EXPECT_EQ(NearDomains(offered, {{}, {}}, {0}), offered);       // no sysfs figures
  EXPECT_EQ(NearDomains(offered, {{4}, {5}}, {0, 1}), offered);  // none near: all
  EXPECT_EQ(NearDomains(offered, {{}, {0}}, {0}), (std::vector<std::string>{"b"}));
  EXPECT_EQ(NearDomains(offered, {{0}, {1}}, {}), offered);  // mask unreadable
}

TEST(OfiRailsTest, AutoSharesTheHostsDomainsAmongItsLocalRanks) {
  EXPECT_EQ(AutoOfiRails(32, 8, 16), 4);  // p5: 32 EFA domains, 8 GPUs
  EXPECT_EQ(AutoOfiRails(4, 8, 16), 1);   // p4d: 4 domains for 8 ranks, never 0
  EXPECT_EQ(AutoOfiRails(4, 1, 16), 4);   // one rank a host takes every NIC
  EXPECT_EQ(AutoOfiRails(5, 2, 16), 2);   // rounded down: no NIC is shared
  EXPECT_EQ(AutoOfiRails(32, 1, 16), 16);  // at most max_rails
  EXPECT_EQ(AutoOfiRails(32, 0, 16), 1);   // local ranks unknown
  EXPECT_EQ(AutoOfiRails(0, 1, 16), 1);
}

TEST(OfiRailsTest, AutoRailsOfAP5GiveEachNicToOneRail) {
  // Rail k of local rank i opens domain slot i*R + k (transport/ofi/rail_setup.cc): with R from
  // AutoOfiRails every one of the 32 domains is opened exactly once.
  std::vector<std::string> domains;
  for (int d = 0; d < 32; ++d) domains.push_back("rdmap" + std::to_string(d) + "-rdm");
  const int rails = AutoOfiRails(32, 8, 16);
  std::vector<int> opened(32, 0);
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < rails; ++k) {
      const std::string d = ChooseDomain(domains, {}, i * rails + k).value();
      ++opened[std::find(domains.begin(), domains.end(), d) - domains.begin()];
    }
  EXPECT_EQ(opened, std::vector<int>(32, 1));
}

}  // namespace
}  // namespace weft::transport::ofi

#endif  // WEFT_HAVE_OFI
