#include "transport/card.h"

#include <gtest/gtest.h>

namespace weft::transport {
namespace {

Card SampleCard() {
  Card c;
  c.rank = 2;
  c.size = 4;
  c.comm_id = 0xdeadbeef;
  c.mode = TransportMode::kTcp;
  c.host_id = "host|boot|net:[1]";
  c.tcp.push_back(net::SockAddr::Parse("10.0.0.2:4312").value());
  c.tcp.push_back(net::SockAddr::Parse("[::1]:4312").value());
  return c;
}

TEST(CardTest, RoundTrips) {
  std::string text = EncodeCard(SampleCard());
  EXPECT_EQ(text,
            "weft-card 1\nrank 2 size 4 comm 00000000deadbeef mode tcp\nhost host|boot|net:[1]\n"
            "tcp 10.0.0.2:4312 [::1]:4312");
  Result<Card> c = DecodeCard(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rank, 2);
  EXPECT_EQ(c->size, 4);
  EXPECT_EQ(c->comm_id, 0xdeadbeefu);
  EXPECT_EQ(c->mode, TransportMode::kTcp);
  EXPECT_EQ(c->host_id, "host|boot|net:[1]");
  ASSERT_EQ(c->tcp.size(), 2u);
  EXPECT_EQ(c->tcp[1].ToString(), "[::1]:4312");

  Card empty = SampleCard();
  empty.tcp.clear();
  ASSERT_TRUE(DecodeCard(EncodeCard(empty)).ok());
  EXPECT_TRUE(DecodeCard(EncodeCard(empty))->tcp.empty());
}

TEST(CardTest, RailsRoundTrip) {
  Card c = SampleCard();
  c.tcp.insert(c.tcp.begin() + 1, net::SockAddr::Parse("10.0.1.2:4312").value());
  c.tcp_rails = 2;
  c.stripe_min = 262144;
  std::string text = EncodeCard(c);
  EXPECT_NE(text.find("tcp 10.0.0.2:4312 10.0.1.2:4312 [::1]:4312 rails 2 stripe-min 262144"),
            std::string::npos)
      << text;
  Result<Card> d = DecodeCard(text);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->tcp.size(), 3u);
  EXPECT_EQ(d->tcp_rails, 2);
  EXPECT_EQ(d->stripe_min, 262144u);
  // One rail is not encoded: the card reads as before multi-rail.
  EXPECT_EQ(DecodeCard(EncodeCard(SampleCard()))->tcp_rails, 1);

  auto with = [&](const std::string& tail) { return text.substr(0, text.find(" rails")) + tail; };
  for (const std::string& bad : {with(" rails 1 stripe-min 262144"), with(" rails 4 stripe-min 1"),
                                 with(" rails 2 stripe-min 0"), with(" rails 2 stripe 262144"),
                                 with(" rails x stripe-min 262144"), with(" rails 2")}) {
    Result<Card> e = DecodeCard(bad);
    EXPECT_EQ(e.status().code(), Code::kProtocolError) << bad;
  }
}

TEST(CardTest, RejectsAnythingElse) {
  std::string good = EncodeCard(SampleCard());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string bad[] = {
      "",
      good + "\n",
      replace("weft-card 1", "weft-card 2"),
      replace("rank 2", "rank -1"),
      replace("rank 2", "rank 4"),
      replace("rank 2", "rank 2x"),
      replace("size 4", "size 0"),
      replace("00000000deadbeef", "deadbeef"),
      replace("mode tcp", "mode ib"),
      replace("host host", "host ho st"),
      replace("host host|boot|net:[1]", "host "),
      replace("tcp 10", "tcp  10"),
      replace("10.0.0.2:4312", "10.0.0.2"),
      replace("10.0.0.2:4312", "localhost:4312"),
      replace("10.0.0.2:4312", "10.0.0.2:99999"),
      replace("\ntcp", "\nudp"),
  };
  for (const std::string& s : bad) {
    Result<Card> c = DecodeCard(s);
    EXPECT_FALSE(c.ok()) << s;
    if (!c.ok()) {
      EXPECT_EQ(c.status().code(), Code::kProtocolError) << s;
    }
  }
}

TEST(CardTest, ShmOfiModeRoundTrips) {
  Card c = SampleCard();
  c.mode = TransportMode::kShmOfi;
  c.tcp.clear();
  c.ofi_provider = "efa";
  c.ofi_addrs = {{0xfe, 0x80}};
  std::string text = EncodeCard(c);
  EXPECT_NE(text.find("mode shm+ofi\n"), std::string::npos) << text;
  Result<Card> d = DecodeCard(text);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->mode, TransportMode::kShmOfi);
  EXPECT_EQ(ResolvedMode(d.value()), TransportMode::kShmOfi);
  EXPECT_EQ(DescribeMode(d.value()), "shm+ofi");
}

TEST(CardTest, AutoResolvesToShmOfiOnlyWithAnOfiLine) {
  Card c = SampleCard();
  c.mode = TransportMode::kAuto;
  EXPECT_EQ(ResolvedMode(c), TransportMode::kAuto);
  EXPECT_EQ(DescribeMode(c), "auto (shm+tcp, no fabric)");
  c.ofi_provider = "efa";
  c.ofi_addrs = {{1, 2, 3}};
  Result<Card> d = DecodeCard(EncodeCard(c));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->mode, TransportMode::kAuto);
  EXPECT_EQ(ResolvedMode(d.value()), TransportMode::kShmOfi);
  EXPECT_EQ(DescribeMode(d.value()), "auto (shm+ofi over efa)");
  // Forced modes are what they say, with or without an ofi line.
  d->mode = TransportMode::kOfi;
  EXPECT_EQ(ResolvedMode(d.value()), TransportMode::kOfi);
}

}  // namespace
}  // namespace weft::transport
