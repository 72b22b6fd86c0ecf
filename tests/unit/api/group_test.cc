// weftGroupStart / weftGroupEnd: blocking calls inside a group are checked and return at
// once; the outermost weftGroupEnd issues them, waits for them all and reports the first
// failure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

class GroupTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GroupTest, BlockingSendsBeforeReceivesInAGroupDoNotDeadlock) {
  // Every rank sends before it receives, with messages far larger than any transport
  // buffer: blocking calls would wait on each other forever; in a group they progress
  // together. A collective in the same group runs too.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "60");
  RunRanks(3, [](int rank, weftComm_t comm) {
    const size_t count = 4 << 20;  // 16 MiB of int32
    std::vector<int32_t> out(count), in(count, -1);
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(rank * 7 + i);
    int32_t one = 1, sum = 0;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftSend(out.data(), count, weftInt32, (rank + 1) % 3, comm), weftSuccess);
    ASSERT_EQ(weftRecv(in.data(), count, weftInt32, (rank + 2) % 3, comm), weftSuccess);
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm), weftSuccess);
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    const int from = (rank + 2) % 3;
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(in[i], static_cast<int32_t>(from * 7 + i));
    EXPECT_EQ(sum, 3);
  });
}

TEST_P(GroupTest, OnlyTheOutermostEndWaits) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(2, [](int rank, weftComm_t comm) {
    std::vector<float> out(1000, static_cast<float>(rank + 1)), in(1000, -1.0f);
    const int peer = 1 - rank;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftSend(out.data(), out.size(), weftFloat32, peer, comm), weftSuccess);
    ASSERT_EQ(weftGroupEnd(), weftSuccess);  // inner: issues nothing more, waits for nothing
    ASSERT_EQ(weftRecv(in.data(), in.size(), weftFloat32, peer, comm), weftSuccess);
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    for (float x : in) ASSERT_EQ(x, static_cast<float>(peer + 1));
  });
}

TEST_P(GroupTest, CallsAreIssuedAtTheEndInTheOrderMade) {
  // As in NCCL, a group's calls are issued by weftGroupEnd: the buffers are read there,
  // not at the call. Two collectives keep their order.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(3, [](int rank, weftComm_t comm) {
    std::vector<int32_t> a(100, 0), b(100, 0);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftAllReduce(a.data(), a.data(), a.size(), weftInt32, weftSum, comm), weftSuccess);
    ASSERT_EQ(weftBroadcast(b.data(), b.data(), b.size(), weftInt32, 2, comm), weftSuccess);
    a.assign(a.size(), rank + 1);
    b.assign(b.size(), rank == 2 ? 7 : -1);
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(a, std::vector<int32_t>(100, 1 + 2 + 3)) << "rank " << rank;
    EXPECT_EQ(b, std::vector<int32_t>(100, 7)) << "rank " << rank;
  });
}

TEST_P(GroupTest, GroupEndReportsTheFirstFailureOnEveryRank) {
  // Rank 0 sends 64 floats, rank 1 receives 128: the receive fails, and rank 0 learns
  // the cause through the barrier in the same group.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(2, [](int rank, weftComm_t comm) {
    std::vector<float> buf(rank == 0 ? 64 : 128, 1.0f);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    if (rank == 0)
      ASSERT_EQ(weftSend(buf.data(), buf.size(), weftFloat32, 1, comm), weftSuccess);
    else
      ASSERT_EQ(weftRecv(buf.data(), buf.size(), weftFloat32, 0, comm), weftSuccess);
    ASSERT_EQ(weftBarrier(comm), weftSuccess);  // issued at the end; fails once the receive has
    weftResult_t res = weftGroupEnd();
    EXPECT_NE(res, weftSuccess) << "rank " << rank;
    std::string error = weftGetLastError(nullptr);
    EXPECT_NE(error.find("different counts"), std::string::npos)
        << "rank " << rank << ": " << error;
    EXPECT_EQ(error, std::string(weftGetLastError(comm))) << "rank " << rank;
  });
}

TEST(GroupApiTest, MisuseIsReported) {
  EXPECT_EQ(weftGroupEnd(), weftInvalidUsage);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("without weftGroupStart"),
            std::string::npos);
  // A call that cannot be issued fails at once; the group goes on and ends cleanly.
  RunRanks(1, [](int, weftComm_t comm) {
    float x = 0;
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    EXPECT_EQ(weftSend(&x, 1, weftFloat32, 5, comm), weftInvalidArgument);
    EXPECT_EQ(weftAllReduce(&x, &x, 1, weftFloat32, weftSum, comm), weftSuccess);
    EXPECT_EQ(weftGroupEnd(), weftSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, GroupTest, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace weft::testing
