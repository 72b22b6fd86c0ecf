// weftUniqueIdDerive: new communicators from one exchanged id, as torch's reconfigure
// forms them (python/csrc/reconfigure.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

std::string Text(const weftUniqueId& id) {
  return std::string(id.internal, strnlen(id.internal, sizeof(id.internal)));
}

// "weft-id-2 <store> <nonce> <secret>": everything but the nonce.
std::string WithoutNonce(const std::string& text) {
  size_t s2 = text.find(' ', text.find(' ') + 1);
  size_t s3 = text.find(' ', s2 + 1);
  return text.substr(0, s2) + text.substr(s3);
}

TEST(UniqueIdDeriveTest, KeepsStoreAndSecretAndPicksANonceBySalt) {
  weftUniqueId base, a, again, b;
  ASSERT_EQ(weftGetUniqueId(&base), weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(weftUniqueIdDerive(&base, 1, &a), weftSuccess) << weftGetLastError(nullptr);
  ASSERT_EQ(weftUniqueIdDerive(&base, 1, &again), weftSuccess);
  ASSERT_EQ(weftUniqueIdDerive(&base, 2, &b), weftSuccess);
  EXPECT_EQ(Text(a), Text(again));  // every process derives the same id
  EXPECT_NE(Text(a), Text(b));
  EXPECT_NE(Text(a), Text(base));
  EXPECT_EQ(WithoutNonce(Text(a)), WithoutNonce(Text(base)));
  EXPECT_EQ(WithoutNonce(Text(b)), WithoutNonce(Text(base)));
  // In place, as the header allows.
  weftUniqueId inplace = base;
  ASSERT_EQ(weftUniqueIdDerive(&inplace, 1, &inplace), weftSuccess);
  EXPECT_EQ(Text(inplace), Text(a));
}

TEST(UniqueIdDeriveTest, RefusesNullAndMalformedIds) {
  weftUniqueId id, out;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  EXPECT_EQ(weftUniqueIdDerive(nullptr, 1, &out), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("base is NULL"), std::string::npos);
  EXPECT_EQ(weftUniqueIdDerive(&id, 1, nullptr), weftInvalidArgument);
  weftUniqueId garbage;
  std::memset(&garbage, 'x', sizeof(garbage));
  EXPECT_EQ(weftUniqueIdDerive(&garbage, 1, &out), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("malformed"), std::string::npos);
}

// Three ranks form a communicator from salt 1, then another from salt 2 with the ranks
// in the reverse order, through the one store; both all-reduce correctly, and each
// rank's place in the second is the one it was given there.
TEST(UniqueIdDeriveTest, SuccessiveCommunicatorsMeetThroughOneStore) {
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  constexpr int kRanks = 3;
  weftUniqueId base;
  ASSERT_EQ(weftGetUniqueId(&base), weftSuccess);
  std::vector<std::thread> threads;
  std::vector<float> sums(2 * kRanks, -1);
  std::vector<int> second_rank(kRanks, -1);
  for (int me = 0; me < kRanks; ++me) {
    threads.emplace_back([&, me] {
      for (uint64_t salt : {1, 2}) {
        weftUniqueId id;
        ASSERT_EQ(weftUniqueIdDerive(&base, salt, &id), weftSuccess);
        const int rank = salt == 1 ? me : kRanks - 1 - me;
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitRank(&comm, kRanks, id, rank), weftSuccess)
            << weftGetLastError(nullptr);
        float v = static_cast<float>(rank + 1);
        EXPECT_EQ(weftAllReduce(&v, &v, 1, weftFloat32, weftSum, comm), weftSuccess)
            << weftGetLastError(comm);
        sums[(salt - 1) * kRanks + me] = v;
        if (salt == 2) weftCommUserRank(comm, &second_rank[me]);
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (float s : sums) EXPECT_EQ(s, 6.0f);
  EXPECT_EQ(second_rank, (std::vector<int>{2, 1, 0}));
}

}  // namespace
}  // namespace weft::testing
