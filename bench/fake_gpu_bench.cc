// Two host-side figures of the device orchestration, on the CPU fake (gpu/fake_device.h)
// with thread ranks, so they can be measured on a machine without a GPU:
//
// 1. Enqueue cost: how long a weft*Stream call keeps its caller, with the stream held
//    busy ahead of it (a fake delay), so the call can only enqueue. Staged on the stream
//    (WEFT_CUDA_STREAM_WAIT=memop, WEFT_CUDA_PATH=staged: the multi-host case) and gated
//    (memop, direct: the worker runs the call behind the gate).
// 2. The staged pipeline's overlap: a blocking allreduce on device buffers through host
//    memory, chunked (WEFT_CUDA_STAGE_CHUNK's default) and unchunked (0), against its three
//    stages alone measured in the same run: the copy down, the host allreduce on pinned
//    buffers, the copy up. The fake copies at --copy-gbps (a PCIe-like rate), so the
//    copies take time without taking all of a core.
//
// These are the fake's figures: they show what the orchestration costs and overlaps,
// not what a GPU's copy engines do. Rounds are interleaved; medians are printed.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/fake_device.h"
#include "weft/weft.h"

namespace {

using Clock = std::chrono::steady_clock;
using weft::gpu::FakeDevice;

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fake_gpu_bench: %s failed: %s\n", what, weftGetLastError(nullptr));
  std::exit(1);
}

FakeDevice& Fake() { return *weft::gpu::ActiveFake(); }

// Connected communicators for `n` thread ranks.
std::vector<weftComm_t> Connect(int n) {
  weftUniqueId id;
  Check(weftGetUniqueId(&id) == weftSuccess, "weftGetUniqueId");
  std::vector<weftComm_t> comms(n);
  std::vector<std::thread> t;
  for (int r = 0; r < n; ++r)
    t.emplace_back([&, r] { Check(weftCommInitRank(&comms[r], n, id, r) == weftSuccess, "init"); });
  for (auto& x : t) x.join();
  return comms;
}
void OnRanks(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> t;
  for (int r = 0; r < n; ++r) t.emplace_back(body, r);
  for (auto& x : t) x.join();
}
void Destroy(std::vector<weftComm_t>& comms) {
  for (weftComm_t c : comms) weftCommDestroy(c);
}

// Median microseconds one allreduce*Stream call of 256 floats keeps its caller, over
// `rounds` rounds of `calls` calls, each round behind a 100 ms hold of the stream.
double EnqueueCost(int n, const char* path, int rounds, int calls) {
  setenv("WEFT_CUDA_STREAM_WAIT", "memop", 1);
  setenv("WEFT_CUDA_PATH", path, 1);
  std::vector<weftComm_t> comms = Connect(n);
  std::vector<std::vector<double>> per_rank(n);
  OnRanks(n, [&](int r) {
    auto stream = Fake().CreateStream().value();
    void* buf = Fake().AllocDevice(256 * sizeof(float)).value();
    for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
      Check(Fake().DelayAsync(100'000, stream).ok(), "DelayAsync");
      for (int i = 0; i < calls; ++i) {
        const auto t0 = Clock::now();
        Check(weftAllReduceStream(buf, buf, 256, weftFloat32, weftSum, comms[r],
                                  static_cast<weftStream_t>(stream)) == weftSuccess,
              "weftAllReduceStream");
        if (round > 0) per_rank[r].push_back(Us(t0, Clock::now()));
      }
      Check(Fake().SyncStream(stream, weft::Deadline::AfterSeconds(60)).ok(), "SyncStream");
    }
    Fake().FreeDevice(buf);
    Fake().DestroyStream(stream);
  });
  Destroy(comms);
  unsetenv("WEFT_CUDA_STREAM_WAIT");
  std::vector<double> all;
  for (auto& v : per_rank) all.insert(all.end(), v.begin(), v.end());
  return Median(all);
}

struct Staged {
  std::vector<weftComm_t> comms;
  std::vector<void*> buf;
};

// Communicators whose device path chunks staged calls by `chunk` (read at the first
// device call, made here one rank set at a time so no thread reads the environment
// while it changes).
Staged MakeStaged(int n, const char* chunk, size_t count) {
  setenv("WEFT_CUDA_PATH", "staged", 1);
  setenv("WEFT_CUDA_STAGE_CHUNK", chunk, 1);
  Staged s{Connect(n), std::vector<void*>(n)};
  OnRanks(n, [&](int r) {
    s.buf[r] = Fake().AllocDevice(count * sizeof(float)).value();
    Check(weftAllReduce(s.buf[r], s.buf[r], 1, weftFloat32, weftSum, s.comms[r]) == weftSuccess,
          "first staged call");
  });
  unsetenv("WEFT_CUDA_STAGE_CHUNK");
  return s;
}

// Microseconds of the slowest rank for one blocking allreduce of `count` floats.
double TimeAllReduce(int n, const std::vector<weftComm_t>& comms, const std::vector<void*>& buf,
                     size_t count) {
  std::vector<double> us(n);
  OnRanks(n, [&](int r) {
    const auto t0 = Clock::now();
    Check(weftAllReduce(buf[r], buf[r], count, weftFloat32, weftSum, comms[r]) == weftSuccess,
          "weftAllReduce");
    us[r] = Us(t0, Clock::now());
  });
  return *std::max_element(us.begin(), us.end());
}

// Microseconds of the slowest rank's copy of `bytes` each way between its device buffer
// and pinned memory.
std::pair<double, double> TimeCopies(int n, const std::vector<void*>& dev,
                                     const std::vector<void*>& pinned, size_t bytes) {
  std::vector<double> down(n), up(n);
  OnRanks(n, [&](int r) {
    auto stream = Fake().CreateStream().value();
    const auto t0 = Clock::now();
    Check(Fake().CopyAsync(pinned[r], dev[r], bytes, stream).ok(), "copy down");
    Check(Fake().SyncStream(stream, weft::Deadline::AfterSeconds(60)).ok(), "sync");
    const auto t1 = Clock::now();
    Check(Fake().CopyAsync(dev[r], pinned[r], bytes, stream).ok(), "copy up");
    Check(Fake().SyncStream(stream, weft::Deadline::AfterSeconds(60)).ok(), "sync");
    down[r] = Us(t0, t1);
    up[r] = Us(t1, Clock::now());
    Fake().DestroyStream(stream);
  });
  return {*std::max_element(down.begin(), down.end()), *std::max_element(up.begin(), up.end())};
}

void PipelineOverlap(int n, size_t bytes, int rounds) {
  const size_t count = bytes / sizeof(float);
  Staged chunked = MakeStaged(n, "4194304", count);
  Staged whole = MakeStaged(n, "0", count);
  std::vector<weftComm_t> host = Connect(n);
  std::vector<void*> pinned(n);
  for (int r = 0; r < n; ++r) pinned[r] = Fake().AllocPinned(bytes).value();
  std::vector<double> t_chunked, t_whole, t_down, t_host, t_up;
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
    const double c = TimeAllReduce(n, chunked.comms, chunked.buf, count);
    const double w = TimeAllReduce(n, whole.comms, whole.buf, count);
    const double h = TimeAllReduce(n, host, pinned, count);
    auto [down, up] = TimeCopies(n, chunked.buf, pinned, bytes);
    if (round == 0) continue;
    t_chunked.push_back(c);
    t_whole.push_back(w);
    t_host.push_back(h);
    t_down.push_back(down);
    t_up.push_back(up);
  }
  const double down = Median(t_down), h = Median(t_host), up = Median(t_up);
  const double slowest = std::max({down, h, up});
  std::printf("staged allreduce, %d ranks, %zu MiB float32 (medians of %d rounds, ms):\n", n,
              bytes >> 20, rounds);
  std::printf("  stages alone: copy down %.2f, host allreduce %.2f, copy up %.2f (sum %.2f)\n",
              down / 1e3, h / 1e3, up / 1e3, (down + h + up) / 1e3);
  std::printf("  unchunked %.2f ms = %.2f x the slowest stage\n", Median(t_whole) / 1e3,
              Median(t_whole) / slowest);
  std::printf("  chunked (4 MiB) %.2f ms = %.2f x the slowest stage\n", Median(t_chunked) / 1e3,
              Median(t_chunked) / slowest);
  for (int r = 0; r < n; ++r) {
    Fake().FreeDevice(chunked.buf[r]);
    Fake().FreeDevice(whole.buf[r]);
    Fake().FreePinned(pinned[r]);
  }
  Destroy(chunked.comms);
  Destroy(whole.comms);
  Destroy(host);
}

}  // namespace

int main(int argc, char** argv) {
  int ranks = 2, rounds = 5;
  size_t mib = 64;
  const char* gbps = "8";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--ranks") ranks = std::atoi(argv[i + 1]);
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (a == "--mib") mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--copy-gbps") gbps = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--rounds R] [--mib M] [--copy-gbps G]\n",
                   argv[0]);
      return 2;
    }
  }
  if (ranks < 1 || rounds < 1 || mib < 8) {
    std::fprintf(stderr, "fake_gpu_bench: --ranks and --rounds at least 1, --mib at least 8\n");
    return 2;
  }
  // Before any weft call: the process's device is decided once, at first use.
  setenv("WEFT_FAKE_DEVICE", "1", 1);
  setenv("WEFT_FAKE_COPY_GBPS", gbps, 1);
  Check(weftCudaAvailable() != 0, "the fake device");
  std::printf("fake device, %d thread ranks, copies at %s GB/s\n", ranks, gbps);
  std::printf("enqueue cost of one allreduce*Stream call (1 KiB, stream held; median us):\n");
  std::printf("  staged on the stream: %.1f\n", EnqueueCost(ranks, "staged", rounds, 50));
  std::printf("  gated (direct path):  %.1f\n", EnqueueCost(ranks, "direct", rounds, 50));
  PipelineOverlap(ranks, mib << 20, rounds);
  return 0;
}
