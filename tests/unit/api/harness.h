// Runs N ranks as threads of this process over the public API (the "multi-rank in one
// process" test tier): each thread calls weftCommInitRank with a shared unique id.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace weft::testing {

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    if (old) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// For tests in which ranks fail: Arrive() marks this rank as returned from its calls and
// waits (at most 40 s) until all `n` have. No rank destroys its communicator (which shuts
// its links) while another still waits on it, so only the failure under test can reach
// the others.
class ReturnTogether {
 public:
  explicit ReturnTogether(int n) : n_(n) {}
  void Arrive() {
    ++returned_;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(40);
    while (returned_.load() < n_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

 private:
  const int n_;
  std::atomic<int> returned_{0};
};

// Runs `body(rank, comm)` on `n` threads with a connected communicator each, then
// destroys the communicators.
inline void RunRanks(int n, const std::function<void(int, weftComm_t)>& body) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      weftComm_t comm = nullptr;
      weftResult_t res = weftCommInitRank(&comm, n, id, r);
      ASSERT_EQ(res, weftSuccess) << "rank " << r << ": " << weftGetLastError(nullptr);
      body(r, comm);
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace weft::testing
