#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/job_key.h"
#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"

namespace weft::bootstrap {
namespace {

using namespace std::chrono_literals;

Deadline Soon() { return Deadline::AfterSeconds(10); }

const net::AuthKey& TestKey() {
  static const net::AuthKey key = KeyFromSecret("store test");
  return key;
}

// A raw connection that has passed the handshake: what follows is the store protocol.
Result<net::Fd> AuthedConnect(const net::SockAddr& addr, const net::AuthKey& key = TestKey()) {
  WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(addr, Soon()));
  WEFT_RETURN_IF_ERROR(
      net::Authenticate(fd.get(), key, net::AuthRole::kStore, -1, 0, addr.ToString(), Soon()));
  return fd;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = StoreServer::Start(net::SockAddr::Parse("127.0.0.1:0").value(), TestKey());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s.value());
  }
  std::unique_ptr<StoreClient> Client() {
    auto c = StoreClient::Connect(server_->address(), TestKey(), Soon());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c.value()) : nullptr;
  }
  std::unique_ptr<StoreServer> server_;
};

TEST_F(StoreTest, SetGetAddCheck) {
  auto c = Client();
  EXPECT_EQ(c->Check("k", Soon()).value(), false);
  ASSERT_TRUE(c->Set("k", std::string("v\0al", 4), Soon()).ok());
  EXPECT_EQ(c->Check("k", Soon()).value(), true);
  EXPECT_EQ(c->Get("k", Soon()).value(), std::string("v\0al", 4));
  ASSERT_TRUE(c->Set("k", "", Soon()).ok());  // overwrite, with an empty value
  EXPECT_EQ(c->Get("k", Soon()).value(), "");
  EXPECT_EQ(c->Add("n", 5, Soon()).value(), 5);
  EXPECT_EQ(c->Add("n", -7, Soon()).value(), -2);
  EXPECT_EQ(c->Get("n", Soon()).value(), "-2");
  EXPECT_EQ(server_->address().ToString().rfind("127.0.0.1:", 0), 0u);
}

TEST_F(StoreTest, AddOnTextIsInvalidArgumentAndConnectionSurvives) {
  auto c = Client();
  ASSERT_TRUE(c->Set("t", "hello", Soon()).ok());
  auto r = c->Add("t", 1, Soon());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  EXPECT_EQ(c->Get("t", Soon()).value(), "hello");
}

TEST_F(StoreTest, LargeValue) {
  auto c = Client();
  std::string big(16 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i);
  ASSERT_TRUE(c->Set("big", big, Soon()).ok());
  auto got = c->Get("big", Soon());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == big);
}

TEST_F(StoreTest, OversizedKeyRejectedByClient) {
  auto c = Client();
  auto r = c->Get(std::string(kMaxKeyLen + 1, 'k'), Soon());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST_F(StoreTest, GetBlocksUntilAnotherThreadSets) {
  auto waiter = Client();
  auto setter = Client();
  std::atomic<bool> set_done{false};
  std::thread t([&] {
    std::this_thread::sleep_for(100ms);
    set_done = true;
    EXPECT_TRUE(setter->Set("late", "here", Soon()).ok());
  });
  auto r = waiter->Get("late", Soon());
  EXPECT_TRUE(set_done.load());
  t.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "here");
}

TEST_F(StoreTest, AddWakesAParkedGet) {
  auto waiter = Client();
  auto adder = Client();
  std::thread t([&] {
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(adder->Add("ctr", 3, Soon()).ok());
  });
  auto r = waiter->Get("ctr", Soon());
  t.join();
  EXPECT_EQ(r.value(), "3");
}

TEST_F(StoreTest, GetTimesOutNamingKeyAndAddressThenClientStillWorks) {
  auto c = Client();
  auto start = std::chrono::steady_clock::now();
  auto r = c->Get("never/set", Deadline::After(200ms));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kDeadlineExceeded);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("'never/set'"), std::string::npos) << m;
  EXPECT_NE(m.find(server_->address().ToString()), std::string::npos) << m;
  EXPECT_LT(took, 2s);
  // The server still holds the old Get; the client must not read its answer as the
  // answer to the next request.
  auto other = Client();
  ASSERT_TRUE(other->Set("never/set", "late", Soon()).ok());
  ASSERT_TRUE(other->Set("x", "1", Soon()).ok());
  EXPECT_EQ(c->Get("x", Soon()).value(), "1");
}

TEST_F(StoreTest, ManyClientsRendezvous) {
  constexpr int kRanks = 64;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      auto c = StoreClient::Connect(server_->address(), TestKey(), Soon());
      if (!c.ok()) { ++failures; return; }
      if (!(*c)->Set(fmt::format("card/{}", rank), fmt::format("card-of-{}", rank), Soon()).ok())
        ++failures;
      for (int peer = 0; peer < kRanks; ++peer) {
        auto v = (*c)->Get(fmt::format("card/{}", peer), Soon());
        if (!v.ok() || *v != fmt::format("card-of-{}", peer)) ++failures;
      }
      if (!(*c)->Add("arrived", 1, Soon()).ok()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Client()->Get("arrived", Soon()).value(), std::to_string(kRanks));
}

// Sends raw bytes and expects the server to close the connection.
void ExpectServerCloses(const net::SockAddr& addr, const std::string& bytes) {
  auto fd = AuthedConnect(addr);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(net::WriteFull(fd->get(), bytes.data(), bytes.size(), Soon()).ok());
  char buf[64];
  Status s = net::ReadFull(fd->get(), buf, sizeof(buf), Deadline::AfterSeconds(5));
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
}

TEST_F(StoreTest, MalformedFramesCloseOnlyThatConnection) {
  auto good = Client();
  ASSERT_TRUE(good->Set("before", "1", Soon()).ok());

  std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // reads as a huge length
  std::string oversized;
  PutU32(oversized, static_cast<uint32_t>(kMaxFrame + 1));
  std::string bad_key;
  PutU32(bad_key, 9);
  bad_key += std::string("\x02\x10\x00\x00\x00" "abcd", 9);  // key length overruns
  std::string unknown = EncodeRequest({StoreCmd::kGet, "k", "", 0});
  unknown[4] = 77;
  for (const auto& bytes : {garbage, oversized, bad_key, unknown})
    ExpectServerCloses(server_->address(), bytes);

  // Truncated: half a frame, then the client goes away.
  {
    auto fd = AuthedConnect(server_->address());
    ASSERT_TRUE(fd.ok());
    std::string frame = EncodeRequest({StoreCmd::kSet, "half", "value", 0});
    ASSERT_TRUE(net::WriteFull(fd->get(), frame.data(), frame.size() / 2, Soon()).ok());
  }
  // A valid request after garbage on the same connection is never answered.
  ExpectServerCloses(server_->address(), unknown + EncodeRequest({StoreCmd::kCheck, "k", "", 0}));

  EXPECT_EQ(good->Get("before", Soon()).value(), "1");
  EXPECT_EQ(good->Check("half", Soon()).value(), false);
  auto fresh = Client();
  ASSERT_TRUE(fresh->Set("after", "2", Soon()).ok());
  EXPECT_EQ(good->Get("after", Soon()).value(), "2");
}

TEST_F(StoreTest, PipelinedRequestsAreAnsweredInOrder) {
  auto fd = AuthedConnect(server_->address());
  ASSERT_TRUE(fd.ok());
  std::string batch = EncodeRequest({StoreCmd::kSet, "p", "v", 0}) +
                      EncodeRequest({StoreCmd::kGet, "p", "", 0}) +
                      EncodeRequest({StoreCmd::kCheck, "q", "", 0});
  ASSERT_TRUE(net::WriteFull(fd->get(), batch.data(), batch.size(), Soon()).ok());
  std::string expect = EncodeReply(StoreReply::kOk, "") + EncodeReply(StoreReply::kOk, "v") +
                       EncodeReply(StoreReply::kOk, std::string(1, '\0'));
  std::string got(expect.size(), '\0');
  ASSERT_TRUE(net::ReadFull(fd->get(), got.data(), got.size(), Soon()).ok());
  EXPECT_EQ(got, expect);
}

TEST_F(StoreTest, ServerDestroyedWhileClientWaitsGivesUnavailable) {
  auto c = Client();
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    server_.reset();
  });
  auto start = std::chrono::steady_clock::now();
  auto r = c->Get("never", Deadline::AfterSeconds(30));
  killer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(StoreTest, ClientConnectTimesOutWithoutServer) {
  net::SockAddr addr = server_->address();
  server_.reset();
  auto c = StoreClient::Connect(addr, TestKey(), Deadline::After(200ms));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(c.status().message().find(addr.ToString()), std::string::npos);
}

TEST(StoreServerIpv6, Works) {
  auto s = StoreServer::Start(net::SockAddr::Parse("[::1]:0").value(), TestKey());
  if (!s.ok()) GTEST_SKIP() << "no ::1: " << s.status().ToString();
  auto c = StoreClient::Connect((*s)->address(), TestKey(), Soon());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Set("a", "b", Soon()).ok());
  EXPECT_EQ((*c)->Get("a", Soon()).value(), "b");
}

}  // namespace
}  // namespace weft::bootstrap

namespace weft::bootstrap {
namespace {

// Connections that do not authenticate are closed and the store serves on.
TEST_F(StoreTest, UnauthenticatedConnectionsAreRejected) {
  auto good = Client();
  ASSERT_TRUE(good->Set("k", "v", Soon()).ok());

  // A store request without the handshake, garbage, and a truncated hello.
  auto raw_closes = [&](const std::string& bytes) {
    auto fd = net::Connect(server_->address(), Soon());
    ASSERT_TRUE(fd.ok());
    ASSERT_TRUE(net::WriteFull(fd->get(), bytes.data(), bytes.size(), Soon()).ok());
    char buf[256];
    Status s = Status::Ok();
    // Read whatever the server sends (nothing, or a challenge) until it closes.
    while (s.ok()) s = net::ReadFull(fd->get(), buf, 1, Deadline::AfterSeconds(5));
    EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  };
  raw_closes(EncodeRequest({StoreCmd::kGet, "k", "", 0}));
  raw_closes("GET / HTTP/1.1\r\n\r\n");
  net::AuthClient half(TestKey(), net::AuthRole::kStore, -1, 0);
  std::string hello = half.Hello().value();
  // A hello whose role is wrong is rejected; a hello cut short and then closed is dropped.
  net::AuthClient data_role(TestKey(), net::AuthRole::kData, 0, 0);
  raw_closes(data_role.Hello().value());
  {
    auto fd = net::Connect(server_->address(), Soon());
    ASSERT_TRUE(net::WriteFull(fd->get(), hello.data(), hello.size() / 2, Soon()).ok());
  }

  // A client with another key: refused, with a message that says so.
  auto wrong = StoreClient::Connect(server_->address(), KeyFromSecret("other job"), Soon());
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kProtocolError);
  EXPECT_NE(wrong.status().message().find("does not hold this job's key"), std::string::npos)
      << wrong.status().ToString();

  EXPECT_EQ(good->Get("k", Soon()).value(), "v");
  EXPECT_EQ(Client()->Get("k", Soon()).value(), "v");
}

}  // namespace
}  // namespace weft::bootstrap
