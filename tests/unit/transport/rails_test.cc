// The pure parts of multi-rail tcp: how many rails, how messages are cut, which
// addresses a rail tries.
#include "transport/tcp/rails.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace weft::transport::tcp {
namespace {

std::vector<Stripe> Plan(uint64_t bytes, int rails, uint64_t stripe_min) {
  std::vector<Stripe> out(static_cast<size_t>(rails));
  out.resize(static_cast<size_t>(PlanStripes(bytes, rails, stripe_min, out.data())));
  return out;
}

TEST(RailsTest, StripesCoverTheMessageInOrder) {
  for (int rails = 1; rails <= kMaxRails; ++rails) {
    for (uint64_t bytes : {0ull, 1ull, 4095ull, 4096ull, 65536ull, 262143ull, 262144ull, 262145ull,
                           1000001ull, 16ull << 20, (16ull << 20) + 3}) {
      for (uint64_t min : {1ull, 4096ull, 262144ull}) {
        std::vector<Stripe> s = Plan(bytes, rails, min);
        ASSERT_GE(s.size(), 1u);
        ASSERT_LE(s.size(), static_cast<size_t>(rails));
        uint64_t off = 0;
        for (const Stripe& st : s) {
          EXPECT_EQ(st.offset, off) << bytes << " " << rails;
          EXPECT_EQ(st.offset % kStripeAlign, 0u);
          if (s.size() > 1) {
            EXPECT_GT(st.bytes, 0u);
          }
          off += st.bytes;
        }
        EXPECT_EQ(off, bytes) << bytes << " over " << rails;
        if (rails == 1 || bytes < min) {
          EXPECT_EQ(s.size(), 1u);
        }
      }
    }
  }
}

TEST(RailsTest, LargeMessagesSplitEvenly) {
  std::vector<Stripe> s = Plan(16 << 20, 2, kDefaultStripeMin);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].bytes, 8u << 20);
  EXPECT_EQ(s[1].bytes, 8u << 20);
  s = Plan((3 << 20) + 5, 3, kDefaultStripeMin);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].bytes, (1u << 20) + 4096);  // rounded up to the alignment
  EXPECT_EQ(s[2].bytes, (3u << 20) + 5 - 2 * ((1u << 20) + 4096));
  // Just below the minimum: whole, on rail 0.
  s = Plan(kDefaultStripeMin - 1, 2, kDefaultStripeMin);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].bytes, kDefaultStripeMin - 1);
}

TEST(RailsTest, LocalRailCount) {
  // auto: every interface of an explicit include list; one under the default rules.
  EXPECT_EQ(LocalRailCount(0, "rail", 2), 2);
  EXPECT_EQ(LocalRailCount(0, "=eth0,eth1,eth2", 3), 3);
  EXPECT_EQ(LocalRailCount(0, "", 3), 1);
  EXPECT_EQ(LocalRailCount(0, "^docker,lo", 3), 1);
  EXPECT_EQ(LocalRailCount(0, "eth", 1), 1);
  // A number: that many, at most the interfaces there are.
  EXPECT_EQ(LocalRailCount(2, "", 3), 2);
  EXPECT_EQ(LocalRailCount(4, "eth", 2), 2);
  EXPECT_EQ(LocalRailCount(1, "rail", 2), 1);
  EXPECT_EQ(LocalRailCount(3, "", 0), 1);  // loopback only
  EXPECT_EQ(PairRails(false, 2, 3), 2);
  EXPECT_EQ(PairRails(false, 4, 1), 1);
  EXPECT_EQ(PairRails(true, 2, 2), 1);
}

TEST(RailsTest, RailAddressesPutTheRailFirst) {
  std::vector<net::SockAddr> a = {net::SockAddr::Parse("10.0.0.2:1").value(),
                                  net::SockAddr::Parse("10.0.1.2:1").value(),
                                  net::SockAddr::Parse("10.0.2.2:1").value()};
  std::vector<net::SockAddr> r = RailAddresses(a, 1);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].ToString(), "10.0.1.2:1");
  EXPECT_EQ(r[1].ToString(), "10.0.0.2:1");
  EXPECT_EQ(r[2].ToString(), "10.0.2.2:1");
  EXPECT_EQ(RailAddresses(a, 5).size(), 3u);
}

TEST(RailsTest, RailCountIsAutoOrOneToSixteenAndErrorsNameTheVariable) {
  EXPECT_EQ(ParseRailCount("WEFT_OFI_NRAILS", "").value(), 0);
  EXPECT_EQ(ParseRailCount("WEFT_OFI_NRAILS", "auto").value(), 0);
  EXPECT_EQ(ParseRailCount("WEFT_OFI_NRAILS", "1").value(), 1);
  EXPECT_EQ(ParseRailCount("WEFT_OFI_NRAILS", "16").value(), 16);
  for (const char* bad : {"0", "17", "-1", "2x", "two", " 2", "Auto"}) {
    Result<int> r = ParseRailCount("WEFT_OFI_NRAILS", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              std::string("WEFT_OFI_NRAILS must be 'auto' or 1..16, got '") + bad + "'");
  }
}

TEST(RailsTest, EnvironmentIsChecked) {
  unsetenv("WEFT_SOCKET_NRAILS");
  EXPECT_EQ(RailsWantedFromEnv().value(), 0);
  setenv("WEFT_SOCKET_NRAILS", "auto", 1);
  EXPECT_EQ(RailsWantedFromEnv().value(), 0);
  setenv("WEFT_SOCKET_NRAILS", "2", 1);
  EXPECT_EQ(RailsWantedFromEnv().value(), 2);
  for (const char* bad : {"0", "17", "two", "2x", "-1"}) {
    setenv("WEFT_SOCKET_NRAILS", bad, 1);
    Result<int> r = RailsWantedFromEnv();
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("WEFT_SOCKET_NRAILS"), std::string::npos);
  }
  unsetenv("WEFT_SOCKET_NRAILS");
  unsetenv("WEFT_TCP_STRIPE_MIN");
  EXPECT_EQ(StripeMinFromEnv().value(), kDefaultStripeMin);
  setenv("WEFT_TCP_STRIPE_MIN", "0", 1);
  EXPECT_FALSE(StripeMinFromEnv().ok());
  setenv("WEFT_TCP_STRIPE_MIN", "65536", 1);
  EXPECT_EQ(StripeMinFromEnv().value(), 65536u);
  unsetenv("WEFT_TCP_STRIPE_MIN");
}

}  // namespace
}  // namespace weft::transport::tcp
