// weftConfig_t at init (weftCommInitRankConfig) and per-communicator timeouts
// (weftCommSetTimeout / weftCommGetTimeout) through the C API.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace {

using weft::testing::ScopedEnv;
using Clock = std::chrono::steady_clock;

std::string LastError() { return weftGetLastError(nullptr); }

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `body(rank, comm)` on `n` threads, each with a communicator made with `config`.
void RunRanksWithConfig(int n, const weftConfig_t* config,
                        const std::function<void(int, weftComm_t)>& body) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << LastError();
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      weftComm_t comm = nullptr;
      ASSERT_EQ(weftCommInitRankConfig(&comm, n, id, r, config), weftSuccess)
          << "rank " << r << ": " << LastError();
      body(r, comm);
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    });
  }
  for (auto& t : threads) t.join();
}

// Refused before any connection: the id need not lead anywhere.
weftResult_t InitWith(const weftConfig_t& config) {
  weftUniqueId id = {};
  weftComm_t comm = reinterpret_cast<weftComm_t>(1);
  weftResult_t res = weftCommInitRankConfig(&comm, 2, id, 0, &config);
  EXPECT_EQ(comm, nullptr);
  return res;
}

void ExpectRefused(const weftConfig_t& config, const std::string& field,
                   const std::string& detail) {
  EXPECT_EQ(InitWith(config), weftInvalidArgument) << field;
  const std::string msg = LastError();
  EXPECT_NE(msg.find(field), std::string::npos) << msg;
  EXPECT_NE(msg.find(detail), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0"), std::string::npos) << msg;
}

TEST(ConfigApiTest, InitializerHoldsTheDefaults) {
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  EXPECT_EQ(config.size, sizeof(weftConfig_t));
  EXPECT_EQ(config.magic, WEFT_CONFIG_MAGIC);
  EXPECT_EQ(config.version, static_cast<unsigned>(WEFT_VERSION_CODE));
  EXPECT_EQ(config.timeout_ms, 0);
  EXPECT_EQ(config.blocking, 1);
  EXPECT_EQ(config.name, nullptr);
}

TEST(ConfigApiTest, EachBadFieldIsRefusedByName) {
  const weftConfig_t good = WEFT_CONFIG_INITIALIZER;
  weftConfig_t c = good;
  c.size = sizeof(weftConfig_t) - 8;
  ExpectRefused(c, "weftConfig_t.size", "WEFT_CONFIG_INITIALIZER");
  c = good;
  c.magic = 0;
  ExpectRefused(c, "weftConfig_t.magic", "WEFT_CONFIG_MAGIC");
  c = good;
  c.version = WEFT_VERSION_CODE + 1;
  ExpectRefused(c, "weftConfig_t.version", "newer");
  c = good;
  c.timeout_ms = -5;
  ExpectRefused(c, "weftConfig_t.timeout_ms is -5", "positive");
  c = good;
  c.blocking = 0;
  ExpectRefused(c, "weftConfig_t.blocking is 0", "non-blocking communicators are not supported");
  c = good;
  c.blocking = 2;
  ExpectRefused(c, "weftConfig_t.blocking is 2", "only 1");
  std::string long_name(WEFT_COMM_NAME_MAX, 'x');
  c = good;
  c.name = long_name.c_str();
  ExpectRefused(c, "weftConfig_t.name", "longer than 127 bytes");
}

TEST(ConfigApiTest, NullConfigAndInitializerTakeWeftTimeout) {
  ScopedEnv env("WEFT_TIMEOUT", "7");
  const weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  for (const weftConfig_t* c : {static_cast<const weftConfig_t*>(nullptr), &config}) {
    RunRanksWithConfig(2, c, [](int, weftComm_t comm) {
      uint64_t ms = 0;
      ASSERT_EQ(weftCommGetTimeout(comm, &ms), weftSuccess);
      EXPECT_EQ(ms, 7000u);
    });
  }
}

TEST(ConfigApiTest, DefaultTimeoutIsWeftTimeoutElse300Seconds) {
  uint64_t ms = 0;
  {
    ScopedEnv unset("WEFT_TIMEOUT", "");
    unsetenv("WEFT_TIMEOUT");
    ASSERT_EQ(weftGetDefaultTimeout(&ms), weftSuccess) << LastError();
    EXPECT_EQ(ms, 300000u);
  }
  {
    ScopedEnv timeout("WEFT_TIMEOUT", "2.5");
    ASSERT_EQ(weftGetDefaultTimeout(&ms), weftSuccess) << LastError();
    EXPECT_EQ(ms, 2500u);
  }
  {
    ScopedEnv bad("WEFT_TIMEOUT", "soon");
    EXPECT_EQ(weftGetDefaultTimeout(&ms), weftInvalidArgument);
    EXPECT_NE(LastError().find("WEFT_TIMEOUT"), std::string::npos) << LastError();
  }
  EXPECT_EQ(weftGetDefaultTimeout(nullptr), weftInvalidArgument);
}

TEST(ConfigApiTest, ConfigTimeoutWinsOverWeftTimeout) {
  ScopedEnv env("WEFT_TIMEOUT", "7");
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.timeout_ms = 1500;
  RunRanksWithConfig(2, &config, [](int, weftComm_t comm) {
    uint64_t ms = 0;
    ASSERT_EQ(weftCommGetTimeout(comm, &ms), weftSuccess);
    EXPECT_EQ(ms, 1500u);
    // A split starts with its parent's current timeout.
    ASSERT_EQ(weftCommSetTimeout(comm, 2500), weftSuccess);
    weftComm_t child = nullptr;
    ASSERT_EQ(weftCommSplit(comm, 0, 0, &child), weftSuccess) << weftGetLastError(comm);
    ASSERT_EQ(weftCommGetTimeout(child, &ms), weftSuccess);
    EXPECT_EQ(ms, 2500u);
    EXPECT_EQ(weftCommDestroy(child), weftSuccess);
  });
}

TEST(ConfigApiTest, SplitConfigGivesTheChildItsNameAndTimeout) {
  ScopedEnv env("WEFT_TIMEOUT", "7");
  RunRanksWithConfig(2, nullptr, [](int rank, weftComm_t comm) {
    weftConfig_t bad = WEFT_CONFIG_INITIALIZER;
    bad.blocking = 0;
    weftComm_t child = reinterpret_cast<weftComm_t>(1);
    // Refused on every rank before the collective: nobody waits for anybody.
    EXPECT_EQ(weftCommSplitConfig(comm, 0, rank, &child, &bad), weftInvalidArgument);
    EXPECT_EQ(child, nullptr);
    std::string err = weftGetLastError(comm);
    EXPECT_NE(err.find("rank " + std::to_string(rank) + ": split (weftCommSplitConfig)"),
              std::string::npos) << err;
    EXPECT_NE(err.find("weftConfig_t.blocking is 0"), std::string::npos) << err;

    weftConfig_t config = WEFT_CONFIG_INITIALIZER;
    config.name = "tp";
    config.timeout_ms = 900;
    ASSERT_EQ(weftCommSplitConfig(comm, 0, rank, &child, &config), weftSuccess)
        << weftGetLastError(comm);
    uint64_t ms = 0;
    ASSERT_EQ(weftCommGetTimeout(child, &ms), weftSuccess);
    EXPECT_EQ(ms, 900u);
    float x = 0;
    EXPECT_EQ(weftSend(&x, 1, weftFloat32, 9, child), weftInvalidArgument);
    err = weftGetLastError(child);
    EXPECT_EQ(err.rfind("communicator \"tp\": ", 0), 0u) << err;
    EXPECT_EQ(weftCommDestroy(child), weftSuccess);
    // timeout_ms 0: the parent's current timeout.
    config.timeout_ms = 0;
    ASSERT_EQ(weftCommSplitConfig(comm, 0, rank, &child, &config), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftCommGetTimeout(child, &ms), weftSuccess);
    EXPECT_EQ(ms, 7000u);
    EXPECT_EQ(weftCommDestroy(child), weftSuccess);
  });
}

TEST(ConfigApiTest, NameIsCopiedAndBeginsTheCommunicatorsErrors) {
  std::string name = "trainer-dp";
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.name = name.c_str();
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << LastError();
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      weftComm_t comm = nullptr;
      ASSERT_EQ(weftCommInitRankConfig(&comm, 2, id, r, &config), weftSuccess) << LastError();
      // Both ranks are past init: the caller's string may change now.
      if (++ready == 2) name.assign("overwritten");
      while (ready.load() < 2) std::this_thread::yield();
      float x = 0;
      EXPECT_EQ(weftSend(&x, 1, weftFloat32, 5, comm), weftInvalidArgument);
      std::string err = weftGetLastError(comm);
      EXPECT_EQ(err.rfind("communicator \"trainer-dp\": ", 0), 0u) << err;
      EXPECT_NE(err.find("peer"), std::string::npos) << err;
      EXPECT_EQ(weftCommSetTimeout(comm, 0), weftInvalidArgument);
      err = weftGetLastError(comm);
      EXPECT_NE(err.find("rank " + std::to_string(r) + ": weftCommSetTimeout: timeout_ms is 0"),
                std::string::npos)
          << err;
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(weftCommSetTimeout(nullptr, 10), weftInvalidArgument);
  uint64_t ms = 0;
  EXPECT_EQ(weftCommGetTimeout(nullptr, &ms), weftInvalidArgument);
}

TEST(ConfigApiTest, SetTimeoutFromAnotherThreadWhileCallsRun) {
  // Any thread may set the timeout (an atomic): TSan checks the race-freedom here.
  RunRanksWithConfig(2, nullptr, [](int, weftComm_t comm) {
    std::atomic<bool> stop{false};
    std::thread setter([&] {
      for (uint64_t i = 0; !stop.load(); ++i) {
        EXPECT_EQ(weftCommSetTimeout(comm, 30000 + i % 7), weftSuccess);
        std::this_thread::yield();
      }
    });
    std::vector<float> x(1024, 1.0f);
    for (int i = 0; i < 50; ++i) {
      weftRequest_t req = nullptr;
      ASSERT_EQ(weftIAllReduce(x.data(), x.data(), x.size(), weftFloat32, weftMax, comm, &req),
                weftSuccess);
      ASSERT_EQ(weftWait(req), weftSuccess) << weftGetLastError(comm);
      ASSERT_EQ(weftAllReduce(x.data(), x.data(), x.size(), weftFloat32, weftMax, comm),
                weftSuccess)
          << weftGetLastError(comm);
    }
    stop.store(true);
    setter.join();
    uint64_t ms = 0;
    ASSERT_EQ(weftCommGetTimeout(comm, &ms), weftSuccess);
    EXPECT_GE(ms, 30000u);
    EXPECT_LT(ms, 30007u);
  });
}

// Rank 0 receives from rank 1, which sends nothing and stays connected (so that the
// receive can end only by its timeout) until rank 0 is done. `recv(comm)` returns the
// result and is timed.
void TimeReceiveThatNeverMatches(const weftConfig_t* config,
                                 const std::function<weftResult_t(weftComm_t)>& recv,
                                 double* seconds, std::string* error) {
  std::atomic<bool> done{false};
  RunRanksWithConfig(2, config, [&](int rank, weftComm_t comm) {
    if (rank == 1) {
      // Bounded: rank 0's receive ends within its timeout, well under this.
      auto give_up = Clock::now() + std::chrono::seconds(60);
      while (!done.load() && Clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return;
    }
    auto start = Clock::now();
    EXPECT_EQ(recv(comm), weftTimeout);
    *seconds = SecondsSince(start);
    *error = weftGetLastError(comm);
    done.store(true);
  });
}

TEST(ConfigApiTest, ConfigTimeoutBoundsACall) {
  ScopedEnv env("WEFT_TIMEOUT", "120");  // what the test would wait without the config
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.timeout_ms = 500;
  config.name = "short";
  double secs = 0;
  std::string err;
  TimeReceiveThatNeverMatches(&config, [](weftComm_t comm) {
    float x = 0;
    return weftRecv(&x, 1, weftFloat32, 1, comm);
  }, &secs, &err);
  EXPECT_GE(secs, 0.4) << err;
  EXPECT_LT(secs, 10.0) << err;
  EXPECT_NE(err.find("communicator \"short\""), std::string::npos) << err;
  EXPECT_NE(err.find("timed out"), std::string::npos) << err;
}

TEST(ConfigApiTest, SetTimeoutAppliesToCallsIssuedAfterIt) {
  ScopedEnv env("WEFT_TIMEOUT", "120");
  double secs = 0;
  std::string err;
  TimeReceiveThatNeverMatches(nullptr, [](weftComm_t comm) {
    uint64_t ms = 0;
    EXPECT_EQ(weftCommGetTimeout(comm, &ms), weftSuccess);
    EXPECT_EQ(ms, 120000u);
    EXPECT_EQ(weftCommSetTimeout(comm, 400), weftSuccess);
    EXPECT_EQ(weftCommGetTimeout(comm, &ms), weftSuccess);
    EXPECT_EQ(ms, 400u);
    float x = 0;
    weftRequest_t req = nullptr;
    EXPECT_EQ(weftIRecv(&x, 1, weftFloat32, 1, comm, &req), weftSuccess);
    // The receive keeps the timeout it was issued with.
    EXPECT_EQ(weftCommSetTimeout(comm, 60000), weftSuccess);
    return weftWait(req);
  }, &secs, &err);
  EXPECT_GE(secs, 0.3) << err;
  EXPECT_LT(secs, 10.0) << err;
  EXPECT_NE(err.find("timed out"), std::string::npos) << err;
}

}  // namespace
