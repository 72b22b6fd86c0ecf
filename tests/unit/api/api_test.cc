// The public C API in one process: argument checking, error strings, and small worlds
// of thread ranks over both transports, including split and non-blocking calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

TEST(ApiTest, EveryResultHasAString) {
  for (int r = 0; r < weftNumResults; ++r) {
    std::string s = weftGetErrorString(static_cast<weftResult_t>(r));
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.find("unknown"), std::string::npos) << r;
  }
  EXPECT_NE(std::string(weftGetErrorString(static_cast<weftResult_t>(99))).find("unknown"),
            std::string::npos);
}

TEST(ApiTest, VersionMatchesHeader) {
  int v = 0;
  ASSERT_EQ(weftGetVersion(&v), weftSuccess);
  EXPECT_EQ(v, WEFT_VERSION_CODE);
}

TEST(ApiTest, NullCommunicatorIsAnInvalidArgument) {
  float x = 0;
  EXPECT_EQ(weftAllReduce(&x, &x, 1, weftFloat32, weftSum, nullptr), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("NULL"), std::string::npos);
}

TEST(ApiTest, InitRejectsBadRankAndSize) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitRank(&comm, 0, id, 0), weftInvalidArgument);
  EXPECT_EQ(weftCommInitRank(&comm, 2, id, 2), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("rank 2"), std::string::npos);
  weftUniqueId garbage;
  std::memset(&garbage, 'x', sizeof(garbage));
  EXPECT_EQ(weftCommInitRank(&comm, 1, garbage, 0), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("malformed"), std::string::npos);
}

TEST(ApiTest, BadArgumentsNameTheProblem) {
  RunRanks(2, [](int rank, weftComm_t comm) {
    float x[4] = {};
    EXPECT_EQ(weftAllReduce(x, x, 4, static_cast<weftDataType_t>(42), weftSum, comm),
              weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("datatype"), std::string::npos);
    EXPECT_EQ(weftBroadcast(x, x, 4, weftFloat32, 5, comm), weftInvalidArgument);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("root 5"), std::string::npos);
    EXPECT_EQ(weftSend(x, 4, weftFloat32, rank, comm), weftInvalidArgument);
    EXPECT_EQ(weftAllReduce(nullptr, x, 4, weftFloat32, weftSum, comm), weftInvalidArgument);
    // Argument errors do not fail the communicator: a good call still works.
    float v = 1.0f + rank;
    ASSERT_EQ(weftAllReduce(&v, &v, 1, weftFloat32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(v, 3.0f);
  });
}

TEST(ApiTest, WorldOfOne) {
  RunRanks(1, [](int, weftComm_t comm) {
    int n = 0, r = -1;
    ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
    ASSERT_EQ(weftCommUserRank(comm, &r), weftSuccess);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(r, 0);
    std::vector<int32_t> in = {1, 2, 3}, out(3, 0);
    ASSERT_EQ(weftAllReduce(in.data(), out.data(), 3, weftInt32, weftSum, comm), weftSuccess);
    EXPECT_EQ(out, in);
    ASSERT_EQ(weftAllGather(in.data(), out.data(), 3, weftInt32, comm), weftSuccess);
    EXPECT_EQ(out, in);
    ASSERT_EQ(weftBarrier(comm), weftSuccess);
  });
}

TEST(ApiTest, LastAlgorithmNamesWhatThePlannerRan) {
  // Forced algorithms, so the expected names do not depend on the planner's thresholds.
  ScopedEnv algo("WEFT_ALGO", "allreduce:ring,broadcast:binomial");
  RunRanks(2, [](int rank, weftComm_t comm) {
    const char* name = "unset";
    ASSERT_EQ(weftCommGetLastAlgorithm(comm, &name), weftSuccess);
    EXPECT_STREQ(name, "");  // nothing run yet
    std::vector<float> buf(1024, 1.0f);
    ASSERT_EQ(weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm),
              weftSuccess);
    ASSERT_EQ(weftCommGetLastAlgorithm(comm, &name), weftSuccess);
    EXPECT_STREQ(name, "ring");
    ASSERT_EQ(weftBroadcast(buf.data(), buf.data(), buf.size(), weftFloat32, 0, comm),
              weftSuccess);
    ASSERT_EQ(weftCommGetLastAlgorithm(comm, &name), weftSuccess);
    EXPECT_STREQ(name, "binomial");
    // Point-to-point calls are not collectives: the name stays.
    if (rank == 0) {
      ASSERT_EQ(weftSend(buf.data(), 4, weftFloat32, 1, comm), weftSuccess);
    } else {
      ASSERT_EQ(weftRecv(buf.data(), 4, weftFloat32, 0, comm), weftSuccess);
    }
    ASSERT_EQ(weftCommGetLastAlgorithm(comm, &name), weftSuccess);
    EXPECT_STREQ(name, "binomial");
    EXPECT_EQ(weftCommGetLastAlgorithm(comm, nullptr), weftInvalidArgument);
  });
  EXPECT_EQ(weftCommGetLastAlgorithm(nullptr, nullptr), weftInvalidArgument);
}

class TransportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TransportTest, AllReduceAcrossThreads) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  for (int n : {2, 3, 4}) {
    RunRanks(n, [n](int rank, weftComm_t comm) {
      const size_t count = 100003;
      std::vector<float> buf(count);
      for (size_t i = 0; i < count; ++i) buf[i] = static_cast<float>((rank + i) % 7);
      ASSERT_EQ(weftAllReduce(buf.data(), buf.data(), count, weftFloat32, weftSum, comm),
                weftSuccess)
          << weftGetLastError(comm);
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < n; ++r) want += static_cast<float>((r + i) % 7);
        ASSERT_EQ(buf[i], want) << "index " << i;
      }
    });
  }
}

// Messages of several single-copy pieces (RecvOp::incremental): the executor reduces each
// piece as it lands, so a mistake in where a piece starts or in which step runs early
// shows as a wrong element. Out of place (copy + reduce fused) and in place, an odd
// count, an integer type and a non-commutative-looking op (max) besides sum.
TEST_P(TransportTest, LargeReductionsReducedAsTheyLand) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  for (int n : {2, 3}) {
    RunRanks(n, [n](int rank, weftComm_t comm) {
      const size_t count = (3u << 20) / 4 + 12345;  // ~3 MiB of float32, over 4 pieces a chunk
      std::vector<float> in(count), out(count, -1.0f);
      for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>((rank * 31 + i) % 97);
      ASSERT_EQ(weftAllReduce(in.data(), out.data(), count, weftFloat32, weftSum, comm),
                weftSuccess)
          << weftGetLastError(comm);
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < n; ++r) want += static_cast<float>((r * 31 + i) % 97);
        ASSERT_EQ(out[i], want) << "sum, out of place, index " << i;
      }
      std::vector<int64_t> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = static_cast<int64_t>((rank * 7919 + i * 13) % 1009);
      ASSERT_EQ(weftAllReduce(v.data(), v.data(), count, weftInt64, weftMax, comm), weftSuccess)
          << weftGetLastError(comm);
      for (size_t i = 0; i < count; ++i) {
        int64_t want = 0;
        for (int r = 0; r < n; ++r)
          want = std::max<int64_t>(want, static_cast<int64_t>((r * 7919 + i * 13) % 1009));
        ASSERT_EQ(v[i], want) << "max, in place, index " << i;
      }
      std::vector<float> part(count / n, -1.0f);
      ASSERT_EQ(weftReduceScatter(in.data(), part.data(), count / n, weftFloat32, weftSum, comm),
                weftSuccess)
          << weftGetLastError(comm);
      for (size_t i = 0; i < part.size(); ++i) {
        const size_t at = rank * (count / n) + i;
        float want = 0;
        for (int r = 0; r < n; ++r) want += static_cast<float>((r * 31 + at) % 97);
        ASSERT_EQ(part[i], want) << "reducescatter, index " << i;
      }
    });
  }
}

TEST_P(TransportTest, SplitIntoEvenAndOdd) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(5, [](int rank, weftComm_t comm) {
    weftComm_t sub = nullptr;
    // Rank 4 opts out; the others split by parity, ordered by descending rank.
    int color = rank == 4 ? WEFT_SPLIT_NOCOLOR : rank % 2;
    ASSERT_EQ(weftCommSplit(comm, color, -rank, &sub), weftSuccess) << weftGetLastError(comm);
    if (rank == 4) {
      EXPECT_EQ(sub, nullptr);
      return;
    }
    ASSERT_NE(sub, nullptr);
    int n = 0, r = 0;
    weftCommCount(sub, &n);
    weftCommUserRank(sub, &r);
    EXPECT_EQ(n, 2);
    EXPECT_EQ(r, rank < 2 ? 1 : 0);  // keys are -rank: the higher old rank comes first
    int64_t v = rank, sum = 0;
    ASSERT_EQ(weftAllReduce(&v, &sum, 1, weftInt64, weftSum, sub), weftSuccess);
    EXPECT_EQ(sum, rank % 2 == 0 ? 0 + 2 : 1 + 3);
    weftCommDestroy(sub);
  });
}

TEST_P(TransportTest, NonBlockingCallsRunInOrder) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(3, [](int rank, weftComm_t comm) {
    std::vector<int32_t> a(1000, rank + 1), b(1000, 0), c(3000, 0);
    weftRequest_t r1 = nullptr, r2 = nullptr;
    ASSERT_EQ(weftIAllReduce(a.data(), a.data(), a.size(), weftInt32, weftSum, comm, &r1),
              weftSuccess);
    ASSERT_EQ(weftIAllGather(a.data(), c.data(), a.size(), weftInt32, comm, &r2), weftSuccess);
    // A blocking call queued behind the two non-blocking ones.
    int32_t root_value = rank == 1 ? 77 : 0;
    ASSERT_EQ(weftBroadcast(&root_value, &root_value, 1, weftInt32, 1, comm), weftSuccess);
    EXPECT_EQ(root_value, 77);
    int done = 0;
    while (!done) ASSERT_EQ(weftTest(r1, &done), weftSuccess);
    ASSERT_EQ(weftWait(r2), weftSuccess) << weftGetLastError(comm);
    for (int32_t x : a) ASSERT_EQ(x, 6);
    for (int32_t x : c) ASSERT_EQ(x, 6);  // gathered after the allreduce finished
    (void)b;
  });
}

// A call repeated with the same arguments runs its prepared plan (comm/prepared_call.h);
// any argument that differs must plan afresh. Each step below changes one argument (or
// only the data) of the call before it, or interleaves a call that replaces the plan or
// queues behind non-blocking work, and checks every element.
TEST_P(TransportTest, RepeatedCallsReplanWhenAnArgumentChanges) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(3, [](int rank, weftComm_t comm) {
    const int n = 3;
    const size_t count = 5000;  // large enough for scratch-using schedules
    std::vector<float> a(count), b(count), c(count);
    auto fill = [&](std::vector<float>& v, int salt) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((rank + salt + i) % 5);
    };
    auto sum_of = [&](int salt, size_t i) {
      float s = 0;
      for (int r = 0; r < n; ++r) s += static_cast<float>((r + salt + i) % 5);
      return s;
    };
    auto check = [&](const std::vector<float>& v, int salt, float scale, const char* step) {
      for (size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(v[i], sum_of(salt, i) * scale) << step << ", index " << i;
    };
    for (int salt = 0; salt < 3; ++salt) {  // same arguments, new data
      fill(a, salt);
      ASSERT_EQ(weftAllReduce(a.data(), b.data(), count, weftFloat32, weftSum, comm), weftSuccess);
      check(b, salt, 1, "repeated out of place");
    }
    fill(b, 7);  // in place on the previous call's output buffer
    ASSERT_EQ(weftAllReduce(b.data(), b.data(), count, weftFloat32, weftSum, comm), weftSuccess);
    check(b, 7, 1, "in place");
    fill(a, 1);  // the average, then the sum again on the same buffers
    ASSERT_EQ(weftAllReduce(a.data(), c.data(), count, weftFloat32, weftAvg, comm), weftSuccess);
    for (size_t i = 0; i < count; ++i) ASSERT_FLOAT_EQ(c[i], sum_of(1, i) / n) << "avg " << i;
    ASSERT_EQ(weftAllReduce(a.data(), c.data(), count, weftFloat32, weftSum, comm), weftSuccess);
    check(c, 1, 1, "sum after avg");
    ASSERT_EQ(weftAllReduce(a.data(), c.data(), 10, weftFloat32, weftSum, comm), weftSuccess);
    for (size_t i = 0; i < 10; ++i) ASSERT_EQ(c[i], sum_of(1, i)) << "shorter count " << i;
    for (int root = 0; root < n; ++root) {  // the same buffers, the root moving
      fill(a, root);
      std::fill(c.begin(), c.end(), -1.0f);
      ASSERT_EQ(weftReduce(a.data(), c.data(), count, weftFloat32, weftSum, root, comm),
                weftSuccess);
      if (rank == root)
        check(c, root, 1, "reduce at the root");
      else
        ASSERT_EQ(c[0], -1.0f) << "a non-root's output was written (root " << root << ")";
    }
    // Behind a non-blocking call the same call runs on the worker; then here again.
    fill(a, 2);
    weftRequest_t req = nullptr;
    ASSERT_EQ(weftIAllReduce(a.data(), b.data(), count, weftFloat32, weftSum, comm, &req),
              weftSuccess);
    ASSERT_EQ(weftAllReduce(a.data(), c.data(), count, weftFloat32, weftSum, comm), weftSuccess);
    ASSERT_EQ(weftWait(req), weftSuccess) << weftGetLastError(comm);
    check(b, 2, 1, "non-blocking");
    check(c, 2, 1, "blocking behind it");
    fill(a, 4);
    ASSERT_EQ(weftAllReduce(a.data(), c.data(), count, weftFloat32, weftSum, comm), weftSuccess);
    check(c, 4, 1, "after the worker");
    // A bad argument on the same buffers is still refused.
    EXPECT_EQ(weftAllReduce(a.data(), c.data(), count, static_cast<weftDataType_t>(99), weftSum,
                            comm),
              weftInvalidArgument);
  });
}

TEST_P(TransportTest, SendRecvRing) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  RunRanks(4, [](int rank, weftComm_t comm) {
    std::vector<double> out(5000, rank), in(5000, -1);
    weftRequest_t s = nullptr, r = nullptr;
    ASSERT_EQ(weftISend(out.data(), out.size(), weftFloat64, (rank + 1) % 4, comm, &s), weftSuccess);
    ASSERT_EQ(weftIRecv(in.data(), in.size(), weftFloat64, (rank + 3) % 4, comm, &r), weftSuccess);
    ASSERT_EQ(weftWait(s), weftSuccess) << weftGetLastError(comm);
    ASSERT_EQ(weftWait(r), weftSuccess) << weftGetLastError(comm);
    for (double x : in) ASSERT_EQ(x, (rank + 3) % 4);
  });
}

TEST_P(TransportTest, ReceiveFirstRingOfLargeMessagesDoesNotDeadlock) {
  // Every rank posts its receive before its send, with messages far larger than any
  // transport buffer: only concurrent progress of the two avoids a deadlock.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "60");
  RunRanks(3, [](int rank, weftComm_t comm) {
    const size_t count = 4 << 20;  // 16 MiB of int32
    std::vector<int32_t> out(count), in(count, -1);
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<int32_t>(rank * 7 + i);
    weftRequest_t r = nullptr, s = nullptr;
    ASSERT_EQ(weftIRecv(in.data(), count, weftInt32, (rank + 2) % 3, comm, &r), weftSuccess);
    ASSERT_EQ(weftISend(out.data(), count, weftInt32, (rank + 1) % 3, comm, &s), weftSuccess);
    ASSERT_EQ(weftWait(r), weftSuccess) << weftGetLastError(comm);
    ASSERT_EQ(weftWait(s), weftSuccess) << weftGetLastError(comm);
    int from = (rank + 2) % 3;
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(in[i], static_cast<int32_t>(from * 7 + i));
    // A collective after the point-to-point traffic still lines up.
    int32_t v = 1, sum = 0;
    ASSERT_EQ(weftAllReduce(&v, &sum, 1, weftInt32, weftSum, comm), weftSuccess);
    EXPECT_EQ(sum, 3);
  });
}

TEST_P(TransportTest, MismatchedCallsAreReportedNotCorrupted) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "3");
  RunRanks(2, [](int rank, weftComm_t comm) {
    std::vector<float> buf(rank == 0 ? 64 : 128, 1.0f);
    weftResult_t res;
    if (rank == 0)
      res = weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm);
    else
      res = weftBroadcast(buf.data(), buf.data(), buf.size(), weftFloat32, 0, comm);
    EXPECT_NE(res, weftSuccess);
    std::string msg = weftGetLastError(comm);
    EXPECT_TRUE(res == weftInvalidUsage || res == weftTimeout || res == weftRemoteError)
        << weftGetErrorString(res) << ": " << msg;
    EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
    // The communicator is failed now: later calls refuse with the cause.
    EXPECT_EQ(weftBarrier(comm), weftAborted);
    EXPECT_NE(std::string(weftGetLastError(comm)).find("failed earlier"), std::string::npos);
  });
}

TEST_P(TransportTest, OneRanksErrorReachesEveryRankPromptly) {
  // Rank 0 passes a different count. The rank that detects the mismatch fails its
  // communicator, which shuts its links, so the others fail at once rather than at
  // WEFT_TIMEOUT. No rank destroys its communicator until all have returned, so only
  // the shutdown can tell them.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  ReturnTogether together(3);
  RunRanks(3, [&](int rank, weftComm_t comm) {
    std::vector<float> buf(rank == 0 ? 64 : 128, 1.0f);
    auto start = std::chrono::steady_clock::now();
    weftResult_t res =
        weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(res, weftSuccess) << "rank " << rank;
    EXPECT_LT(secs, 10.0) << "rank " << rank << ": " << weftGetLastError(comm);
    together.Arrive();
  });
}

TEST_P(TransportTest, EveryRankSeesTheOriginalCause) {
  // As above, but each rank's error must carry the original cause (the count mismatch),
  // not just "peer closed": the failing rank sends its cause before shutting its links.
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  ReturnTogether together(3);
  RunRanks(3, [&](int rank, weftComm_t comm) {
    std::vector<float> buf(rank == 0 ? 64 : 128, 1.0f);
    weftResult_t res =
        weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm);
    EXPECT_NE(res, weftSuccess) << "rank " << rank;
    std::string error = weftGetLastError(comm);
    EXPECT_NE(error.find("different counts"), std::string::npos) << "rank " << rank << ": "
                                                                 << error;
    together.Arrive();
  });
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Two thread ranks over `transport` for the abort tests, which end their communicators
// themselves (weftCommAbort or weftCommDestroy): `rank1(comm)` runs on a thread of its
// own, `rank0(comm)` on this one.
void RunAbortPair(const char* transport, const std::function<void(weftComm_t)>& rank0,
                  const std::function<void(weftComm_t)>& rank1) {
  ScopedEnv transport_env("WEFT_TRANSPORT", transport);
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::thread other([&] {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitRank(&comm, 2, id, 1), weftSuccess) << weftGetLastError(nullptr);
    rank1(comm);
  });
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitRank(&comm, 2, id, 0), weftSuccess) << weftGetLastError(nullptr);
  rank0(comm);
  other.join();
}

TEST_P(TransportTest, AbortFromAnotherThreadUnblocksEverything) {
  // Rank 0 has a blocking receive in progress on one thread and two queued non-blocking
  // calls; rank 1 waits in a receive from rank 0. Neither can ever complete. Rank 0's
  // main thread aborts: its blocked call and its requests return weftAborted at once, and
  // rank 1's receive fails naming rank 0 and the abort, long before WEFT_TIMEOUT.
  std::atomic<bool> aborted{false};
  auto rank0 = [&](weftComm_t comm) {
    std::atomic<int> blocked_result{-1};
    std::atomic<double> blocked_secs{0};
    std::thread blocked([&] {
      int v = 0;
      auto start = std::chrono::steady_clock::now();
      blocked_result = weftRecv(&v, 1, weftInt32, 1, comm);
      blocked_secs = SecondsSince(start);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it block
    auto start = std::chrono::steady_clock::now();
    aborted = true;
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
    double abort_secs = SecondsSince(start);
    EXPECT_LT(abort_secs, 5.0);
    blocked.join();
    EXPECT_EQ(blocked_result.load(), weftAborted);
    EXPECT_LT(blocked_secs.load(), 10.0);
    // weftCommAbort frees the handle only once the blocked call has left it.
    std::printf("weftCommAbort (with the blocked call returned) took %.1f ms\n", abort_secs * 1e3);
  };
  auto rank1 = [&](weftComm_t comm) {
    int v = 0;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(weftRecv(&v, 1, weftInt32, 0, comm), weftRemoteError);
    std::string error = weftGetLastError(comm);
    EXPECT_LT(SecondsSince(start), 20.0);
    EXPECT_TRUE(aborted.load()) << "failed before rank 0 aborted: " << error;
    EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
    EXPECT_NE(error.find("weftCommAbort"), std::string::npos) << error;
    // The failure sticks: the next call is refused at once.
    EXPECT_EQ(weftBarrier(comm), weftAborted);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  };
  RunAbortPair(GetParam(), rank0, rank1);
}

TEST_P(TransportTest, AbortDuringAStreamCallWaitsForIt) {
  // A *Stream call (host buffers, the default stream: it runs as a blocking call) blocks
  // in a receive that never completes; another thread aborts. weftCommAbort must not free
  // the handle while the stream call is still inside it (weft.h): the call returns
  // weftAborted, and it has left the handle by the time weftCommAbort returns. Under
  // ASan a call that outlived the handle is a use-after-free report.
  auto rank0 = [&](weftComm_t comm) {
    std::atomic<int> result{-1};
    std::atomic<int64_t> left_ns{0};
    std::thread blocked([&] {
      int v = 0;
      result = weftRecvStream(&v, 1, weftInt32, 1, comm, nullptr);
      left_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it block
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
    const int64_t abort_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    blocked.join();
    EXPECT_EQ(result.load(), weftAborted);
    // The call leaves the handle before it returns; 5 ms covers the thread's last steps.
    EXPECT_LE(left_ns.load(), abort_ns + 5'000'000);
  };
  auto rank1 = [&](weftComm_t comm) {
    int v = 0;
    EXPECT_NE(weftRecv(&v, 1, weftInt32, 0, comm), weftSuccess);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  };
  RunAbortPair(GetParam(), rank0, rank1);
}

TEST_P(TransportTest, AbortCompletesPendingAndQueuedCalls) {
  // Rank 0: a non-blocking receive in flight (rank 1 never sends), an allreduce queued
  // behind it, and a blocking barrier on another thread queued behind both. The abort
  // completes all three with weftAborted; requests outlive the freed handle.
  std::atomic<bool> done{false};
  auto rank0 = [&](weftComm_t comm) {
    int a = 0, b = 0;
    weftRequest_t r1 = nullptr, r2 = nullptr;
    ASSERT_EQ(weftIRecv(&a, 1, weftInt32, 1, comm, &r1), weftSuccess);
    ASSERT_EQ(weftIAllReduce(&a, &b, 1, weftInt32, weftSum, comm, &r2), weftSuccess);
    std::atomic<int> barrier_result{-1};
    std::thread blocked([&] { barrier_result = weftBarrier(comm); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
    EXPECT_LT(SecondsSince(start), 5.0);
    blocked.join();
    EXPECT_EQ(barrier_result.load(), weftAborted);
    EXPECT_EQ(weftWait(r1), weftAborted);
    EXPECT_NE(std::string(weftGetLastError(nullptr)).find("weftCommAbort"), std::string::npos)
        << weftGetLastError(nullptr);
    EXPECT_EQ(weftWait(r2), weftAborted);
    done = true;
  };
  auto rank1 = [&](weftComm_t comm) {
    while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  };
  RunAbortPair(GetParam(), rank0, rank1);
}

TEST_P(TransportTest, AbortOfAnIdleCommunicatorIsSeenByPeers) {
  // Rank 0 aborts between calls; rank 1's next collective fails at once naming rank 0.
  std::atomic<bool> aborted{false};
  auto rank0 = [&](weftComm_t comm) {
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
    aborted = true;
  };
  auto rank1 = [&](weftComm_t comm) {
    while (!aborted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::vector<float> buf(1000, 1.0f);
    auto start = std::chrono::steady_clock::now();
    EXPECT_NE(weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm),
              weftSuccess);
    EXPECT_LT(SecondsSince(start), 20.0);
    std::string error = weftGetLastError(comm);
    EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);  // on a failed communicator, too
  };
  RunAbortPair(GetParam(), rank0, rank1);
}

#ifdef WEFT_HAVE_OFI
// ofi with the automatic provider choice (here: tcp;ofi_rxm, the only one present).
INSTANTIATE_TEST_SUITE_P(Transports, TransportTest, ::testing::Values("tcp", "shm", "ofi"));
#else
INSTANTIATE_TEST_SUITE_P(Transports, TransportTest, ::testing::Values("tcp", "shm"));
#endif

TEST(ApiTest, RendezvousThatNeverCompletesTimesOut) {
  ScopedEnv timeout("WEFT_TIMEOUT", "2");
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  auto start = std::chrono::steady_clock::now();
  weftResult_t res = weftCommInitRank(&comm, 2, id, 0);  // rank 1 never comes
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(res, weftTimeout) << weftGetLastError(nullptr);
  EXPECT_LT(secs, 6.0);
  std::string msg = weftGetLastError(nullptr);
  EXPECT_NE(msg.find("1"), std::string::npos) << msg;  // names the missing rank
}

TEST(ApiTest, WrongWorldSizeIsNamed) {
  ScopedEnv timeout("WEFT_TIMEOUT", "3");
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::vector<std::string> errors(2);
  std::vector<weftResult_t> results(2);
  std::thread a([&] {
    weftComm_t c = nullptr;
    results[0] = weftCommInitRank(&c, 2, id, 0);
    errors[0] = weftGetLastError(nullptr);
  });
  std::thread b([&] {
    weftComm_t c = nullptr;
    results[1] = weftCommInitRank(&c, 3, id, 1);
    errors[1] = weftGetLastError(nullptr);
  });
  a.join();
  b.join();
  EXPECT_NE(results[0], weftSuccess);
  EXPECT_NE(results[1], weftSuccess);
  // Rank 0 sees rank 1's card with a different size; rank 1 sees that rank 0 gathered
  // cards for another world size. Neither waits for the timeout.
  EXPECT_NE(errors[0].find("world size 3"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("world size 2"), std::string::npos) << errors[1];
}

}  // namespace
}  // namespace weft::testing

// Without a usable GPU (this CI machine), the stream API says why instead of failing
// obscurely, and host buffers with a NULL stream behave exactly as the blocking calls.
TEST(ApiTest, StreamCallsWithoutAGpu) {
  if (weftCudaAvailable()) GTEST_SKIP() << "a GPU is present";
  EXPECT_STRNE(weftCudaUnavailableReason(), "");
  weft::testing::RunRanks(2, [](int rank, weftComm_t comm) {
    float in[3] = {1.0f + rank, 2, 3}, out[3] = {};
    ASSERT_EQ(weftAllReduceStream(in, out, 3, weftFloat32, weftSum, comm, nullptr), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_EQ(out[2], 6.0f);
    // Any non-NULL value stands for a stream: refused before anything is enqueued.
    auto fake = reinterpret_cast<weftStream_t>(uintptr_t{0x1000});
    EXPECT_EQ(weftAllReduceStream(in, out, 3, weftFloat32, weftSum, comm, fake),
              weftInvalidArgument);
    std::string msg = weftGetLastError(comm);
    EXPECT_NE(msg.find("CUDA stream"), std::string::npos) << msg;
    EXPECT_NE(msg.find(weftCudaUnavailableReason()), std::string::npos) << msg;
    weftResult_t async = weftInternalError;
    ASSERT_EQ(weftCommGetAsyncError(comm, &async), weftSuccess);
    EXPECT_EQ(async, weftSuccess);
    // The communicator is still healthy: the refusal was an argument error.
    ASSERT_EQ(weftBroadcastStream(in, out, 3, weftFloat32, 0, comm, nullptr), weftSuccess);
    EXPECT_EQ(out[0], 1.0f);
  });
}
