// weft.hpp, the C++ layer: tagged sends and receives, receives from any source, group
// calls, and errors as weft::Error, with thread ranks over tcp and shm.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "weft/weft.hpp"

namespace weft::testing {
namespace {

// `n` thread ranks, each with its own weft::Comm.
void RunCppRanks(int n, const std::function<void(int, weft::Comm&)>& body) {
  const weftUniqueId id = weft::Comm::NewUniqueId();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      weft::Comm comm = weft::Comm::FromUniqueId(n, id, rank);
      body(rank, comm);
    });
  }
  for (auto& t : threads) t.join();
}

class CppLayerTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CppLayerTest, TaggedRingInAGroupAndFromAnySource) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  const int n = 3;
  RunCppRanks(n, [&](int rank, weft::Comm& comm) {
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    // Every rank sends first, 1 MiB: in a group the sends and receives progress together.
    std::vector<int32_t> out(1 << 18, rank), in(1 << 18, -1);
    weft::group([&] {
      comm.send(out.data(), out.size(), next, /*tag=*/7);
      comm.recv(in.data(), in.size(), prev, /*tag=*/7);
    });
    EXPECT_EQ(in, std::vector<int32_t>(in.size(), prev)) << "rank " << rank;
    // Non-blocking, two tags in order.
    std::vector<double> a(10, rank + 0.5), b(20, rank + 0.25), ga(10), gb(20);
    {
      weft::Request ra = comm.irecv(ga.data(), ga.size(), prev, 1);
      weft::Request rb = comm.irecv(gb.data(), gb.size(), prev, 2);
      weft::Request sa = comm.isend(a.data(), a.size(), next, 1);
      weft::Request sb = comm.isend(b.data(), b.size(), next, 2);
      for (weft::Request* r : {&ra, &rb, &sa, &sb}) r->wait();
    }
    EXPECT_EQ(ga, std::vector<double>(10, prev + 0.5)) << "rank " << rank;
    EXPECT_EQ(gb, std::vector<double>(20, prev + 0.25)) << "rank " << rank;
    // Rank 0 receives one message from each other rank, whichever comes first.
    if (rank == 0) {
      std::vector<bool> seen(n, false);
      for (int i = 1; i < n; ++i) {
        int32_t v = -1;
        const int source = comm.recv_any(&v, 1, /*tag=*/3);
        ASSERT_GT(source, 0);
        ASSERT_LT(source, n);
        EXPECT_EQ(v, source * 10);
        EXPECT_FALSE(seen[source]) << "rank " << source << " chosen twice";
        seen[source] = true;
      }
    } else {
      const int32_t v = rank * 10;
      comm.send(&v, 1, 0, /*tag=*/3);
    }
    comm.barrier();
  });
}

TEST_P(CppLayerTest, AReceiveForATagThatNeverComesThrows) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunCppRanks(2, [&](int rank, weft::Comm& comm) {
    int32_t v = 5;
    if (rank == 0) {
      // Rank 1 cannot join the barrier while its receive waits: both fail, at once.
      comm.send(&v, 1, 1, /*tag=*/4);
      EXPECT_THROW(comm.barrier(), weft::Error);
      return;
    }
    try {
      comm.recv(&v, 1, 0, /*tag=*/9);
      ADD_FAILURE() << "the receive took a message with another tag";
    } catch (const weft::Error& e) {
      EXPECT_EQ(e.code(), weftInvalidUsage);
      EXPECT_NE(std::string(e.what()).find("rank 0 tag 4"), std::string::npos) << e.what();
    }
  });
}

TEST_P(CppLayerTest, AFailureInsideAGroupIsThrownAtItsEnd) {
  ScopedEnv transport("WEFT_TRANSPORT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunCppRanks(2, [&](int rank, weft::Comm& comm) {
    std::vector<float> buf(rank == 0 ? 64 : 128, 1.0f);
    try {
      weft::group([&] {
        if (rank == 0)
          comm.send(buf.data(), buf.size(), 1);
        else
          comm.recv(buf.data(), buf.size(), 0);
        comm.barrier();
      });
      ADD_FAILURE() << "rank " << rank << ": the group ended without an error";
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find("different counts"), std::string::npos)
          << "rank " << rank << ": " << e.what();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, CppLayerTest, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace weft::testing
