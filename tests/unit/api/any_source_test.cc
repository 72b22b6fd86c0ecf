// Receives from any source (weftRecvAny, weftIRecvAny): each takes the next message of
// whichever peer's arrives first and names that peer; each peer's messages are still
// taken in the order sent; a receive posted after one from any source waits until it has
// chosen; and every wait is bounded, with a clear error where it cannot run.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

class AnySourceTest : public ::testing::TestWithParam<const char*> {};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_P(AnySourceTest, OneRankTakesEveryPeersMessagesAndNamesEachSender) {
  // torch's test_send_recv_any_source, in C: every other rank sends rank 0 two messages
  // holding its rank and a sequence number; rank 0 receives them all from any source.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  const int world = 4, each = 2;
  RunRanks(world, [&](int rank, weftComm_t comm) {
    if (rank != 0) {
      for (int k = 0; k < each; ++k) {
        std::vector<int32_t> msg(100, rank * 10 + k);
        ASSERT_EQ(weftSend(msg.data(), msg.size(), weftInt32, 0, comm), weftSuccess)
            << weftGetLastError(comm);
      }
    } else {
      std::vector<int> next(world, 0);  // the next sequence number expected from each peer
      for (int i = 0; i < (world - 1) * each; ++i) {
        std::vector<int32_t> got(100, -1);
        int source = -1;
        if (i % 2 == 0) {
          ASSERT_EQ(weftRecvAny(got.data(), got.size(), weftInt32, 0, &source, comm), weftSuccess)
              << weftGetLastError(comm);
        } else {
          weftRequest_t req = nullptr;
          ASSERT_EQ(weftIRecvAny(got.data(), got.size(), weftInt32, 0, &source, comm, &req),
                    weftSuccess);
          ASSERT_EQ(weftWait(req), weftSuccess) << weftGetLastError(comm);
        }
        ASSERT_GE(source, 1);
        ASSERT_LT(source, world);
        for (int32_t x : got) ASSERT_EQ(x, source * 10 + next[source]) << "message " << i;
        ++next[source];
      }
      for (int peer = 1; peer < world; ++peer) EXPECT_EQ(next[peer], each) << peer;
    }
    // The collectives still line up afterwards.
    int32_t one = 1, sum = 0;
    ASSERT_EQ(weftAllReduce(&one, &sum, 1, weftInt32, weftSum, comm), weftSuccess);
    EXPECT_EQ(sum, world);
  });
}

TEST_P(AnySourceTest, AReceivePostedAfterAnyWaitsUntilItHasChosen) {
  // Rank 1 sends 11 then 12, late. Rank 0 posts a receive from any source, then one from
  // rank 1: the first message is the any-source receive's, the second the named one's.
  // (Posted to the link at once, the named receive would take 11.)
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(3, [](int rank, weftComm_t comm) {
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int32_t a = 11, b = 12;
      ASSERT_EQ(weftSend(&a, 1, weftInt32, 0, comm), weftSuccess);
      ASSERT_EQ(weftSend(&b, 1, weftInt32, 0, comm), weftSuccess);
    } else if (rank == 0) {
      int32_t any = -1, named = -1;
      int source = -1;
      weftRequest_t r_any = nullptr, r_named = nullptr;
      ASSERT_EQ(weftIRecvAny(&any, 1, weftInt32, 0, &source, comm, &r_any), weftSuccess);
      ASSERT_EQ(weftIRecv(&named, 1, weftInt32, 1, comm, &r_named), weftSuccess);
      ASSERT_EQ(weftWait(r_named), weftSuccess) << weftGetLastError(comm);
      ASSERT_EQ(weftWait(r_any), weftSuccess) << weftGetLastError(comm);
      EXPECT_EQ(source, 1);
      EXPECT_EQ(any, 11);
      EXPECT_EQ(named, 12);
    }
    ASSERT_EQ(weftBarrier(comm), weftSuccess) << weftGetLastError(comm);
  });
}

TEST_P(AnySourceTest, APeerThatIsDoneIsPassedOver) {
  // Rank 1 sends its one message and leaves (destroys its communicator); rank 2 sends
  // later. Rank 0's second receive from any source waits for rank 2, not failing on the
  // end of rank 1's stream.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(3, [](int rank, weftComm_t comm) {
    int32_t v = rank;
    if (rank == 1) {
      ASSERT_EQ(weftSend(&v, 1, weftInt32, 0, comm), weftSuccess);
    } else if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ASSERT_EQ(weftSend(&v, 1, weftInt32, 0, comm), weftSuccess);
    } else {
      int sources[2] = {-1, -1};
      for (int& source : sources) {
        int32_t got = -1;
        ASSERT_EQ(weftRecvAny(&got, 1, weftInt32, 0, &source, comm), weftSuccess)
            << weftGetLastError(comm);
        EXPECT_EQ(got, source);
      }
      EXPECT_EQ(sources[0], 1);
      EXPECT_EQ(sources[1], 2);
    }
  });
}

TEST_P(AnySourceTest, AMessageWithAnotherTagIsNotTaken) {
  // Rank 1 sends tag 3; rank 0 asks any source for tag 4, and then for tag 3. The first
  // receive times out naming the message held instead; nothing of it lands in its buffer.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "2");
  ReturnTogether together(2);
  RunRanks(2, [&](int rank, weftComm_t comm) {
    int32_t v = 5;
    if (rank == 1) {
      ASSERT_EQ(weftSendTagged(&v, 1, weftInt32, 0, 3, comm), weftSuccess);
    } else {
      int source = -1;
      v = -1;
      EXPECT_EQ(weftRecvAny(&v, 1, weftInt32, 4, &source, comm), weftTimeout);
      std::string error = weftGetLastError(comm);
      EXPECT_NE(error.find("recv of 4 bytes with tag 4 from any source timed out"),
                std::string::npos)
          << error;
      EXPECT_NE(error.find("not taken by any receive: rank 1 tag 3 (4 bytes)"), std::string::npos)
          << error;
      EXPECT_EQ(v, -1);
      EXPECT_EQ(source, -1);
    }
    together.Arrive();
  });
}

TEST_P(AnySourceTest, WaitsAreBounded) {
  // Nothing is ever sent: the receive times out at WEFT_TIMEOUT. Then the only peer
  // leaves (destroys its communicator): a receive that can only wait for it ends at once.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "1");
  ReturnTogether together(2);
  RunRanks(2, [&](int rank, weftComm_t comm) {
    if (rank == 0) {
      int32_t v = 0;
      int source = -1;
      auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(weftRecvAny(&v, 1, weftInt32, 0, &source, comm), weftTimeout);
      EXPECT_LT(SecondsSince(start), 5.0);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("from any source timed out"),
                std::string::npos)
          << weftGetLastError(comm);
    }
    together.Arrive();
  });
  ScopedEnv longer("WEFT_TIMEOUT", "30");
  RunRanks(2, [&](int rank, weftComm_t comm) {
    if (rank == 1) return;  // leaves at once: the harness destroys its communicator
    int32_t v = 0;
    int source = -1;
    auto start = std::chrono::steady_clock::now();
    weftResult_t res = weftRecvAny(&v, 1, weftInt32, 0, &source, comm);
    EXPECT_EQ(res, weftRemoteError) << weftGetLastError(comm);
    EXPECT_LT(SecondsSince(start), 10.0) << weftGetLastError(comm);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, AnySourceTest, ::testing::Values("tcp", "shm"));

TEST(AnySourceApiTest, RefusedWhereItCannotRun) {
  RunRanks(1, [](int, weftComm_t comm) {
    int32_t v = 0;
    int source = -1;
    EXPECT_EQ(weftRecvAny(&v, 1, weftInt32, 0, nullptr, comm), weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("source is NULL"), std::string::npos);
    EXPECT_EQ(weftRecvAny(&v, 1, weftInt32, 0, &source, comm), weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("no peer in a world of one"),
              std::string::npos)
        << weftGetLastError(comm);
  });
}

}  // namespace
}  // namespace weft::testing
