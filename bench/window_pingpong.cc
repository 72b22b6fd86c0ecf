// Half a round trip between two ranks of one host, by window (weftWinPut + weftWinSignal,
// the peer's weftWinWaitSignal) against weftSend/weftRecv, interleaved in one run:
//
//   weftrun -n 2 build/bench/weft_window_pingpong [bytes...]
//
// Prints one line per size: median and min over 5 blocks of 2000 round trips each, in µs.
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTrips = 2000;
constexpr int kBlocks = 5;

void Must(weftResult_t r, weftComm_t comm, const char* what) {
  if (r == weftSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, weftGetLastError(comm) ? weftGetLastError(comm) : "");
  std::exit(1);
}

// Half a round trip, µs: rank 0 sends and waits for the answer; rank 1 answers.
double Window(weftWindow_t win, int rank, const void* src, size_t bytes) {
  const int peer = 1 - rank;
  auto start = Clock::now();
  for (int i = 0; i < kTrips; ++i) {
    if (rank == 0) {
      Must(weftWinPut(win, src, bytes, peer, 0), nullptr, "put");
      Must(weftWinSignal(win, peer), nullptr, "signal");
      Must(weftWinWaitSignal(win, peer, 0), nullptr, "wait");
    } else {
      Must(weftWinWaitSignal(win, peer, 0), nullptr, "wait");
      Must(weftWinPut(win, src, bytes, peer, 0), nullptr, "put");
      Must(weftWinSignal(win, peer), nullptr, "signal");
    }
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kTrips / 2;
}

double SendRecv(weftComm_t comm, int rank, void* buf, size_t bytes) {
  const int peer = 1 - rank;
  auto start = Clock::now();
  for (int i = 0; i < kTrips; ++i) {
    if (rank == 0) {
      Must(weftSend(buf, bytes, weftUint8, peer, comm), comm, "send");
      Must(weftRecv(buf, bytes, weftUint8, peer, comm), comm, "recv");
    } else {
      Must(weftRecv(buf, bytes, weftUint8, peer, comm), comm, "recv");
      Must(weftSend(buf, bytes, weftUint8, peer, comm), comm, "send");
    }
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kTrips / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {8, 4096, 65536, 1 << 20};
  weftComm_t comm = nullptr;
  Must(weftCommInitFromEnv(&comm), nullptr, "init");
  int rank = 0, size = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &size);
  if (size != 2) {
    std::fprintf(stderr, "weft_window_pingpong: needs 2 ranks, got %d\n", size);
    return 2;
  }
  const size_t most = *std::max_element(sizes.begin(), sizes.end());
  void *window = nullptr, *src = nullptr;
  Must(weftMemAlloc(&window, most), nullptr, "weftMemAlloc");
  Must(weftMemAlloc(&src, most), nullptr, "weftMemAlloc");
  std::memset(src, rank + 1, most);
  weftWindow_t win = nullptr;
  Must(weftWinCreate(comm, window, most, &win), comm, "weftWinCreate");
  if (rank == 0) std::printf("%10s %22s %22s\n", "bytes", "window us (med/min)", "send/recv us (med/min)");
  for (size_t bytes : sizes) {
    std::vector<double> w, s;
    for (int b = 0; b < kBlocks; ++b) {  // interleaved: one block of each, in turn
      Must(weftBarrier(comm), comm, "barrier");
      w.push_back(Window(win, rank, src, bytes));
      Must(weftBarrier(comm), comm, "barrier");
      s.push_back(SendRecv(comm, rank, src, bytes));
    }
    std::sort(w.begin(), w.end());
    std::sort(s.begin(), s.end());
    if (rank == 0)
      std::printf("%10zu %14.2f / %5.2f %14.2f / %5.2f\n", bytes, w[kBlocks / 2], w[0],
                  s[kBlocks / 2], s[0]);
  }
  Must(weftBarrier(comm), comm, "barrier");
  weftWinFree(win);
  weftMemFree(window);
  weftMemFree(src);
  weftCommDestroy(comm);
  return 0;
}
