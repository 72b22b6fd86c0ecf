// wait_for_peer: for tests that cut the network between two ranks
// (tests/netns/partition_test.sh). Each rank must fail in bounded time, naming the
// other, although WEFT_TIMEOUT is long.
//
//   wait_for_peer SECONDS          idle: rank 0 waits in a receive from rank 1, which
//                                  stays silent for SECONDS (in a sleep, not in any weft
//                                  call), then exits. Only rank 0 reports.
//   wait_for_peer SECONDS busy     busy: both ranks run 4 MiB allreduces back to back for
//                                  up to SECONDS, so the cut lands mid-transfer with data
//                                  in flight. Both ranks report.
//   wait_for_peer SECONDS slow     slow reader, no cut: rank 0 sends 64 MiB to rank 1,
//                                  which sleeps SECONDS before receiving, so rank 0 faces
//                                  a zero window for that long. Both must succeed: a
//                                  live peer that does not read is not declared dead.
//
// Ranks print "ready" once initialised (busy: after the first allreduce). A reporting
// rank then prints "DETECTED <realtime ms> after <ms> ms: <error>" and exits 0 when its
// call fails and the error names the other rank, "FAIL ..." and exits 1 otherwise.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {

long long RealtimeMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

// Reports how the failed call ended; `since` is when this rank began waiting.
int Report(weftComm_t comm, int rank, weftResult_t res,
           std::chrono::steady_clock::time_point since) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - since).count();
  std::string error = weftGetLastError(comm);
  std::string other = "rank " + std::to_string(1 - rank);
  weftCommAbort(comm);
  if (res == weftSuccess || error.find(other) == std::string::npos) {
    std::printf("FAIL rank %d: call returned %s after %lld ms: %s\n", rank,
                weftGetErrorString(res), static_cast<long long>(ms), error.c_str());
    return 1;
  }
  std::printf("DETECTED %lld after %lld ms: %s\n", RealtimeMs(), static_cast<long long>(ms),
              error.c_str());
  return 0;
}

int Busy(weftComm_t comm, int rank, int seconds) {
  std::vector<float> buf(size_t{1} << 20, 1.0f);
  auto start = std::chrono::steady_clock::now();
  for (long calls = 0;; ++calls) {
    weftResult_t res = weftAllReduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum,
                                     comm);
    if (res != weftSuccess) return Report(comm, rank, res, start);
    if (calls == 0) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
    std::fill(buf.begin(), buf.end(), 1.0f);  // keep values finite
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) {
      std::printf("FAIL rank %d: %ld allreduces in %d s and no error\n", rank, calls + 1,
                  seconds);
      weftCommAbort(comm);
      return 1;
    }
  }
}

// The slow-reader case: prints "OK rank R" and exits 0 when the transfer succeeds with
// the right contents.
int SlowReader(weftComm_t comm, int rank, int seconds) {
  std::vector<int32_t> buf(size_t{16} << 20);
  weftResult_t res;
  if (rank == 0) {
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<int32_t>(i);
    res = weftSend(buf.data(), buf.size(), weftInt32, 1, comm);
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    res = weftRecv(buf.data(), buf.size(), weftInt32, 0, comm);
    for (size_t i = 0; res == weftSuccess && i < buf.size(); ++i)
      if (buf[i] != static_cast<int32_t>(i)) {
        std::printf("FAIL rank 1: element %zu is %d\n", i, buf[i]);
        return 1;
      }
  }
  if (res != weftSuccess) {
    std::printf("FAIL rank %d: %s\n", rank, weftGetLastError(comm));
    return 1;
  }
  std::printf("OK rank %d\n", rank);
  return weftCommDestroy(comm) == weftSuccess ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string mode = argc > 2 ? argv[2] : "idle";
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  weftCommUserRank(comm, &rank);
  if (mode == "busy") return Busy(comm, rank, seconds);
  if (mode == "slow") return SlowReader(comm, rank, seconds);
  std::printf("ready\n");
  std::fflush(stdout);
  if (rank != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    weftCommAbort(comm);
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  int v = 0;
  return Report(comm, rank, weftRecv(&v, 1, weftInt32, 1, comm), start);
}
