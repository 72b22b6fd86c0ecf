// Tagged point-to-point (weft*Tagged): the tag travels with the message and the receive
// checks it. Messages between two ranks are taken in the order they were sent, so tags
// posted in that order arrive, and a receive naming another tag than the next message's
// fails on both ranks with both tags named, instead of taking the wrong message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

class TagsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TagsTest, TagsPostedInOrderDeliverEachMessage) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(3, [](int rank, weftComm_t comm) {
    const int next = (rank + 1) % 3, prev = (rank + 2) % 3;
    // Two tags of different sizes, one negative (torch passes any int), and a large
    // message that cannot go eagerly.
    std::vector<int32_t> small(64, rank), big(1 << 20, rank * 10);
    std::vector<int32_t> got_small(64, -1), got_big(1 << 20, -1);
    weftRequest_t r[4] = {};
    ASSERT_EQ(weftIRecvTagged(got_small.data(), 64, weftInt32, prev, -7, comm, &r[0]), weftSuccess);
    ASSERT_EQ(
        weftIRecvTagged(got_big.data(), got_big.size(), weftInt32, prev, 1 << 30, comm, &r[1]),
        weftSuccess);
    ASSERT_EQ(weftISendTagged(small.data(), 64, weftInt32, next, -7, comm, &r[2]), weftSuccess);
    ASSERT_EQ(weftISendTagged(big.data(), big.size(), weftInt32, next, 1 << 30, comm, &r[3]),
              weftSuccess);
    for (weftRequest_t& q : r) ASSERT_EQ(weftWait(q), weftSuccess) << weftGetLastError(comm);
    for (int32_t x : got_small) ASSERT_EQ(x, prev);
    for (int32_t x : got_big) ASSERT_EQ(x, prev * 10);

    // The blocking calls, and the untagged ones, which are tag 0.
    int32_t v = rank, w = -1;
    if (rank == 0) {
      ASSERT_EQ(weftSendTagged(&v, 1, weftInt32, 1, 3, comm), weftSuccess);
      ASSERT_EQ(weftSend(&v, 1, weftInt32, 1, comm), weftSuccess);
    } else if (rank == 1) {
      ASSERT_EQ(weftRecvTagged(&w, 1, weftInt32, 0, 3, comm), weftSuccess)
          << weftGetLastError(comm);
      EXPECT_EQ(w, 0);
      w = -1;
      ASSERT_EQ(weftRecvTagged(&w, 1, weftInt32, 0, 0, comm), weftSuccess)
          << weftGetLastError(comm);
      EXPECT_EQ(w, 0);
    }
    // Collectives still line up after tagged traffic.
    int32_t one = 1, sum = 0;
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm), weftSuccess);
    EXPECT_EQ(sum, 3);
  });
}

TEST_P(TagsTest, AReceiveNamingAnotherTagFailsOnBothRanks) {
  // Rank 0 sends tag 1 then tag 2, same sizes; rank 1 asks for tag 2 first. Without the
  // check it would take tag 1's data as tag 2's.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  ReturnTogether together(2);
  RunRanks(2, [&](int rank, weftComm_t comm) {
    std::vector<float> a(32, 1.0f), b(32, 2.0f), got(32, -1.0f);
    if (rank == 0) {
      ASSERT_EQ(weftSendTagged(a.data(), 32, weftFloat32, 1, 1, comm), weftSuccess);
      weftResult_t second = weftSendTagged(b.data(), 32, weftFloat32, 1, 2, comm);
      // The sends may be handed off before rank 1 looks at them; the next call that
      // needs rank 1 learns the cause.
      weftResult_t res = second == weftSuccess ? weftBarrier(comm) : second;
      EXPECT_NE(res, weftSuccess);
      std::string error = weftGetLastError(comm);
      EXPECT_NE(error.find("another tag than the next message's"), std::string::npos) << error;
    } else {
      weftResult_t res = weftRecvTagged(got.data(), 32, weftFloat32, 0, 2, comm);
      EXPECT_EQ(res, weftInvalidUsage);
      std::string error = weftGetLastError(comm);
      EXPECT_NE(error.find("expected p2p seq 0 tag 2"), std::string::npos) << error;
      EXPECT_NE(error.find("sent p2p seq 0 tag 1"), std::string::npos) << error;
      EXPECT_NE(error.find("another tag than the next message's"), std::string::npos) << error;
      for (float x : got) EXPECT_EQ(x, -1.0f) << "the wrong message's data was delivered";
    }
    together.Arrive();
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, TagsTest, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace weft::testing
