// OfiEndpoint::Open's provider and domain choice against the real libfabric, over its tcp
// provider on loopback (the one interface every machine has): WEFT_OFI_DOMAIN pins the
// domain or fails quoting what is offered; auto's probe takes only a real fabric.
#ifdef WEFT_HAVE_OFI

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "net/link_speed.h"
#include "transport/ofi/nic_choice.h"
#include "transport/ofi/ofi_endpoint.h"

namespace weft::transport::ofi {
namespace {

using ::testing::HasSubstr;

class OfiDomainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_OFI_PROVIDER", "tcp;ofi_rxm", 1);
    setenv("WEFT_SOCKET_IFNAME", "=lo", 1);
  }
  void TearDown() override {
    unsetenv("WEFT_OFI_DOMAIN");
    unsetenv("WEFT_SOCKET_IFNAME");
  }
};

TEST_F(OfiDomainTest, PinnedDomainIsOpened) {
  setenv("WEFT_OFI_DOMAIN", "lo", 1);
  for (int local = 0; local < 3; ++local) {
    OpenOptions o;
    o.local_index = local;
    auto e = OfiEndpoint::Open(0, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e.value()->domain(), "lo");
  }
}

TEST_F(OfiDomainTest, UnsetTheSelectedInterfaceIsTheOnlyDomain) {
  OpenOptions o;
  o.local_index = 1;  // 1 mod 1: the one interface WEFT_SOCKET_IFNAME selects
  auto e = OfiEndpoint::Open(0, o);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e.value()->domain(), "lo");
}

TEST_F(OfiDomainTest, PinnedNameNotOfferedQuotesWhatIs) {
  setenv("WEFT_OFI_DOMAIN", "lo,nosuchnic0", 1);
  auto e = OfiEndpoint::Open(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("rank 3"));
  EXPECT_THAT(e.status().message(), HasSubstr("WEFT_OFI_DOMAIN names 'nosuchnic0'"));
  EXPECT_THAT(e.status().message(), HasSubstr("it offers 'lo'"));
}

TEST_F(OfiDomainTest, AutoProbeRefusesTcp) {
  OpenOptions o;
  o.fabric_only = true;
  auto e = OfiEndpoint::Open(0, o);  // WEFT_OFI_PROVIDER=tcp;ofi_rxm
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("not a fabric that WEFT_TRANSPORT=auto uses"));
  if (RdmaDevicePresent(net::kSysClassDir)) GTEST_SKIP() << "this machine has RDMA devices";
  unsetenv("WEFT_OFI_PROVIDER");
  e = OfiEndpoint::Open(0, o);  // efa and verbs;ofi_rxm only, neither here
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kUnavailable);
  EXPECT_THAT(e.status().message(), HasSubstr("no libfabric provider"));
  EXPECT_THAT(e.status().message(), ::testing::Not(HasSubstr("tcp;ofi_rxm")));
}

}  // namespace
}  // namespace weft::transport::ofi

#endif  // WEFT_HAVE_OFI
