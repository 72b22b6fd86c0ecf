// One-sided windows (weftWinCreate, weftWinPut, weftWinSignal, weftWinWaitSignal) with
// thread ranks. The processes-apart case (and a peer that dies) runs through torch in
// tests/python/test_window.py.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

// A window's own calls report in this thread's last error; creation on the communicator.
std::string Error(weftComm_t comm) { return weftGetLastError(comm); }
std::string WinError() { return weftGetLastError(nullptr); }

// Each rank's window: `bytes` of a weftMemAlloc buffer, freed after the body.
void WithWindows(int n, size_t bytes,
                 const std::function<void(int, weftComm_t, weftWindow_t, uint8_t*)>& body) {
  ScopedEnv timeout("WEFT_TIMEOUT", "20");
  RunRanks(n, [&](int rank, weftComm_t comm) {
    void* buf = nullptr;
    ASSERT_EQ(weftMemAlloc(&buf, bytes), weftSuccess);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftWinCreate(comm, buf, bytes, &win), weftSuccess) << Error(comm);
    body(rank, comm, win, static_cast<uint8_t*>(buf));
    EXPECT_EQ(weftBarrier(comm), weftSuccess) << Error(comm);
    EXPECT_EQ(weftWinFree(win), weftSuccess);
    EXPECT_EQ(weftMemFree(buf), weftSuccess);
  });
}

// A ring: each rank puts its pattern into the next rank's window, signals it, and waits
// for the previous rank's signal; what it then reads in its own memory is the
// previous rank's pattern, also through the peer pointer the previous rank sees.
TEST(WindowTest, APutBeforeASignalIsSeenByTheWaiter) {
  constexpr int kRanks = 3;
  constexpr size_t kBytes = 1 << 16;
  WithWindows(kRanks, kBytes, [&](int rank, weftComm_t comm, weftWindow_t win, uint8_t* mine) {
    const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
    for (int round = 0; round < 50; ++round) {
      std::vector<uint8_t> pattern(kBytes - 8, static_cast<uint8_t>(rank * 50 + round));
      ASSERT_EQ(weftWinPut(win, pattern.data(), pattern.size(), next, 8), weftSuccess)
          << WinError();
      ASSERT_EQ(weftWinSignal(win, next), weftSuccess);
      ASSERT_EQ(weftWinWaitSignal(win, prev, 0), weftSuccess) << WinError();
      const uint8_t want = static_cast<uint8_t>(prev * 50 + round);
      for (size_t i = 8; i < kBytes; ++i) ASSERT_EQ(mine[i], want) << "byte " << i;
      // Nobody writes the next round into this window before everyone has checked it.
      ASSERT_EQ(weftBarrier(comm), weftSuccess);
    }
    void* peer = nullptr;
    size_t size = 0;
    ASSERT_EQ(weftWinPeerPtr(win, next, &peer, &size), weftSuccess);
    EXPECT_EQ(size, kBytes);
    EXPECT_EQ(static_cast<uint8_t*>(peer)[kBytes - 1], static_cast<uint8_t>(rank * 50 + 49));
  });
}

TEST(WindowTest, OutOfRangePutsAndPeersAreRefusedAndTheWindowStillWorks) {
  WithWindows(2, 4096, [](int rank, weftComm_t comm, weftWindow_t win, uint8_t*) {
    const int other = 1 - rank;
    char byte = 'x';
    EXPECT_EQ(weftWinPut(win, &byte, 1, other, 4096), weftInvalidArgument);
    EXPECT_NE(WinError().find("1 bytes at offset 4096 do not fit in rank " + std::to_string(other) +
                              "'s window of 4096 bytes"),
              std::string::npos)
        << WinError();
    EXPECT_EQ(weftWinPut(win, &byte, 1, 2, 0), weftInvalidArgument);
    EXPECT_NE(WinError().find("peer 2 is out of range"), std::string::npos) << WinError();
    EXPECT_EQ(weftWinSignal(win, -1), weftInvalidArgument);
    EXPECT_EQ(weftWinPut(win, nullptr, 1, other, 0), weftInvalidArgument);
    EXPECT_EQ(weftWinPut(win, &byte, 1, other, 4095), weftSuccess);
    EXPECT_EQ(weftWinSignal(win, other), weftSuccess);
    EXPECT_EQ(weftWinWaitSignal(win, other, 0), weftSuccess) << WinError();
  });
}

TEST(WindowTest, AWaitWithoutASignalTimesOutNamingThePeer) {
  WithWindows(2, 4096, [](int rank, weftComm_t comm, weftWindow_t win, uint8_t*) {
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(weftWinWaitSignal(win, 1 - rank, 200), weftTimeout);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_NE(WinError().find("for signal 1 from rank " + std::to_string(1 - rank)),
              std::string::npos)
        << WinError();
  });
}

// A rank whose range is not weftMemAlloc memory fails every rank's create, naming it.
TEST(WindowTest, APlainBufferOnOneRankFailsEveryRank) {
  ScopedEnv timeout("WEFT_TIMEOUT", "20");
  RunRanks(3, [](int rank, weftComm_t comm) {
    std::vector<uint8_t> plain(4096);
    void* shared = nullptr;
    ASSERT_EQ(weftMemAlloc(&shared, 4096), weftSuccess);
    void* buf = rank == 1 ? static_cast<void*>(plain.data()) : shared;
    weftWindow_t win = reinterpret_cast<weftWindow_t>(&plain);  // must come back NULL
    EXPECT_EQ(weftWinCreate(comm, buf, 4096, &win), weftInvalidArgument);
    EXPECT_EQ(win, nullptr);
    EXPECT_NE(Error(comm).find("weftWinCreate: rank 1: its buffer (4096 bytes"), std::string::npos)
        << Error(comm);
    EXPECT_NE(Error(comm).find("weftMemAlloc"), std::string::npos) << Error(comm);
    // The communicator is unharmed.
    float v = 1;
    EXPECT_EQ(weftAllReduce(&v, &v, 1, weftFloat32, weftSum, comm), weftSuccess);
    EXPECT_EQ(v, 3.0f);
    EXPECT_EQ(weftMemFree(shared), weftSuccess);
  });
}

// A rank may expose nothing (size 0); the others still put to each other, and a put to
// it is out of range.
TEST(WindowTest, ARankWithAnEmptyRangeTakesPart) {
  ScopedEnv timeout("WEFT_TIMEOUT", "20");
  RunRanks(3, [](int rank, weftComm_t comm) {
    void* buf = nullptr;
    ASSERT_EQ(weftMemAlloc(&buf, 256), weftSuccess);
    weftWindow_t win = nullptr;
    ASSERT_EQ(weftWinCreate(comm, rank == 2 ? nullptr : buf, rank == 2 ? 0 : 256, &win),
              weftSuccess)
        << Error(comm);
    void* ptr = nullptr;
    size_t size = 1;
    ASSERT_EQ(weftWinPeerPtr(win, 2, &ptr, &size), weftSuccess);
    EXPECT_EQ(size, 0u);
    uint32_t word = 0xabcd0000u + static_cast<uint32_t>(rank);
    EXPECT_EQ(weftWinPut(win, &word, sizeof word, 2, 0), weftInvalidArgument);
    if (rank < 2) {
      ASSERT_EQ(weftWinPut(win, &word, sizeof word, 1 - rank, 16), weftSuccess);
      ASSERT_EQ(weftWinSignal(win, 1 - rank), weftSuccess);
      ASSERT_EQ(weftWinWaitSignal(win, 1 - rank, 0), weftSuccess) << WinError();
      uint32_t got = 0;
      std::memcpy(&got, static_cast<uint8_t*>(buf) + 16, sizeof got);
      EXPECT_EQ(got, 0xabcd0000u + static_cast<uint32_t>(1 - rank));
    }
    EXPECT_EQ(weftBarrier(comm), weftSuccess);
    EXPECT_EQ(weftWinFree(win), weftSuccess);
    EXPECT_EQ(weftMemFree(buf), weftSuccess);
  });
}

TEST(WindowTest, NullArgumentsAreRefused) {
  EXPECT_EQ(weftWinPut(nullptr, nullptr, 0, 0, 0), weftInvalidArgument);
  EXPECT_EQ(weftWinFree(nullptr), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("window is NULL"), std::string::npos);
  void* buf = nullptr;
  EXPECT_EQ(weftWinCreate(nullptr, buf, 0, nullptr), weftInvalidArgument);
}

}  // namespace
}  // namespace weft::testing
