#include "bootstrap/rendezvous.h"
#include "bootstrap/job_key.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace weft::bootstrap {
namespace {

using namespace std::chrono_literals;

class RendezvousTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = StoreServer::Start(net::SockAddr::Parse("127.0.0.1:0").value(), KeyFromSecret("rendezvous test"));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s.value());
  }
  std::unique_ptr<StoreClient> Client() {
    return StoreClient::Connect(server_->address(), KeyFromSecret("rendezvous test"),
                                Deadline::AfterSeconds(10)).value();
  }
  // Runs `fn(rank, client)` on one thread per rank in `ranks`.
  template <typename Fn>
  void RunRanks(const std::vector<int>& ranks, Fn fn) {
    std::vector<std::thread> threads;
    for (int r : ranks) threads.emplace_back([&, r] { fn(r, *Client()); });
    for (auto& t : threads) t.join();
  }
  std::unique_ptr<StoreServer> server_;
};

std::vector<int> Iota(int n, int from = 0) {
  std::vector<int> v;
  for (int i = from; i < n; ++i) v.push_back(i);
  return v;
}

TEST(FormatRanks, Ranges) {
  EXPECT_EQ(FormatRanks({}), "");
  EXPECT_EQ(FormatRanks({4}), "4");
  EXPECT_EQ(FormatRanks({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(FormatRanks({0, 2, 3, 4, 7, 9, 10}), "0,2-4,7,9-10");
  EXPECT_EQ(FormatRanks({0, 2, 4, 6}, 2), "0,2,...");
}

TEST_F(RendezvousTest, EveryWorldSizeGetsEveryCard) {
  for (int size : {1, 2, 3, 7, 16, 33}) {
    std::vector<std::vector<std::string>> got(size);
    std::string prefix = fmt::format("w{}/cards", size);
    RunRanks(Iota(size), [&](int rank, StoreClient& c) {
      // Cards of different lengths, with binary bytes, empty for rank 1.
      std::string card = rank == 1 ? "" : fmt::format("card{}{}", rank, std::string(rank, '\0'));
      auto r = ExchangeCards(c, prefix, rank, size, card, Deadline::AfterSeconds(20));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      got[rank] = std::move(r.value());
    });
    for (int rank = 0; rank < size; ++rank) {
      ASSERT_EQ(got[rank].size(), static_cast<size_t>(size));
      for (int peer = 0; peer < size; ++peer) {
        std::string want = peer == 1 ? "" : fmt::format("card{}{}", peer, std::string(peer, '\0'));
        EXPECT_EQ(got[rank][peer], want) << "size " << size << " rank " << rank;
      }
    }
  }
}

TEST_F(RendezvousTest, TimeoutNamesMissingRanks) {
  std::vector<Status> errors(5);
  auto start = std::chrono::steady_clock::now();
  RunRanks(Iota(4), [&](int rank, StoreClient& c) {
    errors[rank] = ExchangeCards(c, "comm/abc", rank, 5, "x", Deadline::After(300ms)).status();
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(errors[rank].code(), Code::kDeadlineExceeded) << errors[rank].ToString();
    EXPECT_NE(errors[rank].message().find(
                  "rendezvous 'comm/abc': timed out after"),
              std::string::npos)
        << errors[rank].message();
    EXPECT_NE(errors[rank].message().find("waiting for ranks 4 of world size 5 (registered: 0-3)"),
              std::string::npos)
        << errors[rank].message();
  }
}

TEST_F(RendezvousTest, TimeoutWhenRankZeroIsMissing) {
  std::vector<Status> errors(3);
  RunRanks({1, 2}, [&](int rank, StoreClient& c) {
    errors[rank] = ExchangeCards(c, "r0", rank, 3, "x", Deadline::After(200ms)).status();
  });
  EXPECT_NE(errors[1].message().find("waiting for ranks 0 of world size 3 (registered: 1-2)"),
            std::string::npos)
      << errors[1].message();
}

TEST_F(RendezvousTest, RejectsBadRank) {
  auto c = Client();
  EXPECT_EQ(ExchangeCards(*c, "p", 3, 3, "", Deadline::AfterSeconds(1)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ExchangeCards(*c, "p", -1, 3, "", Deadline::AfterSeconds(1)).status().code(),
            Code::kInvalidArgument);
}

TEST_F(RendezvousTest, ServerGoneIsUnavailable) {
  auto c = Client();
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    server_.reset();
  });
  auto r = ExchangeCards(*c, "gone", 1, 2, "x", Deadline::AfterSeconds(20));
  killer.join();
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().ToString();
}

TEST_F(RendezvousTest, Barrier) {
  constexpr int kSize = 12;
  std::atomic<int> before{0};
  RunRanks(Iota(kSize), [&](int rank, StoreClient& c) {
    ++before;
    Status s = Barrier(c, "b/1", kSize, Deadline::AfterSeconds(20));
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(before.load(), kSize);  // nobody leaves before everyone arrived
  });
}

TEST_F(RendezvousTest, BarrierTimeoutCountsArrivals) {
  std::vector<Status> errors(3);
  RunRanks(Iota(3), [&](int rank, StoreClient& c) {
    errors[rank] = Barrier(c, "b/2", 4, Deadline::After(200ms));
  });
  EXPECT_EQ(errors[0].code(), Code::kDeadlineExceeded);
  EXPECT_NE(errors[0].message().find("3 of 4 ranks arrived"), std::string::npos)
      << errors[0].message();
}

}  // namespace
}  // namespace weft::bootstrap
