// wait_for_peer: rank 0 waits in a receive from rank 1, which stays silent for SECONDS
// (in a sleep, not in any weft call), then exits. For tests that cut the network under
// an idle peer (tests/netns/partition_test.sh): rank 0 must fail in bounded time, naming
// rank 1, although nothing flows and WEFT_TIMEOUT is long.
//
//   wait_for_peer SECONDS
//
// Both ranks print "ready" once initialised. Rank 0 then prints
// "DETECTED <realtime ms> after <ms> ms: <error>" and exits 0 when its receive fails and
// the error names rank 1, "FAIL ..." and exits 1 otherwise.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "weft/weft.h"

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 30;
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  weftCommUserRank(comm, &rank);
  std::printf("ready\n");
  std::fflush(stdout);
  if (rank != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    weftCommAbort(comm);
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  int v = 0;
  weftResult_t res = weftRecv(&v, 1, weftInt32, 1, comm);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start).count();
  long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  std::string error = weftGetLastError(comm);
  weftCommAbort(comm);
  if (res == weftSuccess || error.find("rank 1") == std::string::npos) {
    std::printf("FAIL rank 0: receive returned %s after %lld ms: %s\n", weftGetErrorString(res),
                static_cast<long long>(ms), error.c_str());
    return 1;
  }
  std::printf("DETECTED %lld after %lld ms: %s\n", now_ms, static_cast<long long>(ms),
              error.c_str());
  return 0;
}
