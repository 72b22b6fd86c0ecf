// Collectives on device buffers of the CPU fake (gpu/fake_device.h), through the public
// API with thread ranks: the device orchestration (comm/device_calls.h,
// comm/device_path.h, gpu/stream_gate.h) runs exactly as on CUDA, against the fake's
// streams, memory and IPC. Proven here on a CPU only; a GPU run is tools/gpu-check.sh.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <cstring>
#include <string>
#include <vector>

#include "../api/harness.h"
#include "fake_buffers.h"
#include "gpu/fake_device.h"
#include "weft/weft.h"

namespace weft::gpu {
namespace {


using weft::testing::RunRanks;
using weft::testing::ScopedEnv;
using weft::gpu::testing::Fake;
using weft::gpu::testing::DeviceInts;
using weft::gpu::testing::HostInts;

int32_t Value(int rank, size_t i) { return (rank + 1) * 100 + static_cast<int32_t>(i % 97); }

struct Case {
  int ranks;
  const char* path;  // WEFT_CUDA_PATH
};

class FakeCollectives : public ::testing::TestWithParam<Case> {};

TEST_P(FakeCollectives, AllReduceInPlaceAndOutOfPlace) {
  const Case c = GetParam();
  ScopedEnv path("WEFT_CUDA_PATH", c.path);
  ASSERT_TRUE(weftCudaAvailable()) << weftCudaUnavailableReason();
  const size_t count = 1000;
  RunRanks(c.ranks, [&](int rank, weftComm_t comm) {
    std::vector<int32_t> mine(count), expect(count, 0);
    for (size_t i = 0; i < count; ++i) {
      mine[i] = Value(rank, i);
      for (int r = 0; r < c.ranks; ++r) expect[i] += Value(r, i);
    }
    int32_t* in = DeviceInts(mine);
    int32_t* out = DeviceInts(std::vector<int32_t>(count, -1));
    ASSERT_EQ(weftAllReduce(in, out, count, weftInt32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(HostInts(out, count), expect) << "rank " << rank << " out of place";
    ASSERT_EQ(weftAllReduce(in, in, count, weftInt32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(HostInts(in, count), expect) << "rank " << rank << " in place";
    Fake().FreeDevice(in);
    Fake().FreeDevice(out);
  });
}

TEST_P(FakeCollectives, ReduceScatterAndReduceInPlace) {
  const Case c = GetParam();
  ScopedEnv path("WEFT_CUDA_PATH", c.path);
  const size_t per = 64;
  const int root = c.ranks - 1;  // rank 8 of 9: past the first reduction batch
  RunRanks(c.ranks, [&](int rank, weftComm_t comm) {
    const size_t total = per * c.ranks;
    std::vector<int32_t> mine(total), sum(total, 0);
    for (size_t i = 0; i < total; ++i) {
      mine[i] = Value(rank, i);
      for (int r = 0; r < c.ranks; ++r) sum[i] += Value(r, i);
    }
    int32_t* buf = DeviceInts(mine);
    // In place: the output is this rank's block of the input.
    ASSERT_EQ(weftReduceScatter(buf, buf + rank * per, per, weftInt32, weftSum, comm),
              weftSuccess)
        << weftGetLastError(comm);
    std::vector<int32_t> got = HostInts(buf + rank * per, per);
    EXPECT_EQ(got, std::vector<int32_t>(sum.begin() + rank * per, sum.begin() + (rank + 1) * per))
        << "rank " << rank << " reducescatter in place";
    ASSERT_TRUE(Fake().Write(buf, mine.data(), total * sizeof(int32_t)).ok());
    ASSERT_EQ(weftReduce(buf, buf, total, weftInt32, weftSum, root, comm), weftSuccess)
        << weftGetLastError(comm);
    if (rank == root) {
      EXPECT_EQ(HostInts(buf, total), sum) << "reduce in place at the root";
    }
    Fake().FreeDevice(buf);
  });
}

TEST_P(FakeCollectives, AllGatherAndBroadcast) {
  const Case c = GetParam();
  ScopedEnv path("WEFT_CUDA_PATH", c.path);
  const size_t count = 50;
  RunRanks(c.ranks, [&](int rank, weftComm_t comm) {
    std::vector<int32_t> mine(count), all;
    for (size_t i = 0; i < count; ++i) mine[i] = Value(rank, i);
    for (int r = 0; r < c.ranks; ++r)
      for (size_t i = 0; i < count; ++i) all.push_back(Value(r, i));
    int32_t* in = DeviceInts(mine);
    int32_t* out = DeviceInts(std::vector<int32_t>(count * c.ranks, 0));
    ASSERT_EQ(weftAllGather(in, out, count, weftInt32, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(HostInts(out, count * c.ranks), all) << "rank " << rank;
    ASSERT_EQ(weftBroadcast(in, in, count, weftInt32, 1, comm), weftSuccess)
        << weftGetLastError(comm);
    std::vector<int32_t> from1(all.begin() + count, all.begin() + 2 * count);
    EXPECT_EQ(HostInts(in, count), from1) << "rank " << rank;
    Fake().FreeDevice(in);
    Fake().FreeDevice(out);
  });
}

INSTANTIATE_TEST_SUITE_P(Paths, FakeCollectives,
                         ::testing::Values(Case{2, "direct"}, Case{4, "direct"},
                                           Case{9, "direct"}, Case{16, "direct"},
                                           Case{2, "staged"},
                                           Case{9, "staged"}, Case{16, "staged"}),
                         [](const auto& info) {
                           return std::to_string(info.param.ranks) + "ranks_" + info.param.path;
                         });

// NCCL's semantics with stream memory operations (WEFT_CUDA_STREAM_WAIT=memop): the call
// returns while work queued ahead of it on the stream still runs, and work queued after
// it waits for the collective.
TEST(FakeStreamCalls, ReturnBeforeTheStreamReachesThemAndHoldWhatFollows) {
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", "memop");
  const size_t count = 256;
  RunRanks(2, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    std::vector<int32_t> mine(count, rank + 1);
    int32_t* buf = DeviceInts(std::vector<int32_t>(count, 0));
    std::vector<int32_t> after(count, 0);
    // The input is written by the stream itself, after a delay: the collective must
    // wait for it.
    ASSERT_TRUE(Fake().DelayAsync(300'000, stream.value()).ok());
    ASSERT_TRUE(Fake().CopyAsync(buf, mine.data(), count * sizeof(int32_t), stream.value()).ok());
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(weftAllReduceStream(buf, buf, count, weftInt32, weftSum, comm,
                                  static_cast<weftStream_t>(stream.value())),
              weftSuccess)
        << weftGetLastError(comm);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    EXPECT_LT(ms, 200.0) << "the call waited for the stream";
    ASSERT_TRUE(Fake().CopyAsync(after.data(), buf, count * sizeof(int32_t), stream.value()).ok());
    ASSERT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(60)).ok());
    EXPECT_EQ(after, std::vector<int32_t>(count, 3)) << "rank " << rank;
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
  });
}

TEST(FakeStreamCalls, SynchronousByDefault) {
  const size_t count = 16;
  RunRanks(2, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    int32_t* buf = DeviceInts(std::vector<int32_t>(count, rank + 1));
    ASSERT_EQ(weftAllReduceStream(buf, buf, count, weftInt32, weftSum, comm,
                                  static_cast<weftStream_t>(stream.value())),
              weftSuccess)
        << weftGetLastError(comm);
    // Returned means done: the result is there without synchronising the stream.
    EXPECT_EQ(HostInts(buf, count), std::vector<int32_t>(count, 3));
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
  });
}

TEST(FakeStreamCalls, ADeviceInputWithAHostOutputIsStaged) {
  RunRanks(2, [&](int rank, weftComm_t comm) {
    int32_t* a = DeviceInts(std::vector<int32_t>(4, 1));
    std::vector<int32_t> host(4, 0);
    // Device input, host output: the staged path takes it.
    ASSERT_EQ(weftAllReduce(a, host.data(), 4, weftInt32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(host, std::vector<int32_t>(4, 2)) << "rank " << rank;
    Fake().FreeDevice(a);
  });
}

}  // namespace
}  // namespace weft::gpu

namespace weft::gpu {
namespace {

// Which threads made device calls during `body` on `n` thread ranks: the ranks' own
// (true) or some other (false: the communicators' workers).
bool OnlyRankThreadsCalledTheDevice(int n, const std::function<void(int, weftComm_t)>& body) {
  std::mutex mu;
  std::set<std::thread::id> ranks;
  (void)Fake().TakeLog();
  RunRanks(n, [&](int rank, weftComm_t comm) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ranks.insert(std::this_thread::get_id());
    }
    body(rank, comm);
  });
  bool only_ranks = true;
  for (const auto& e : Fake().TakeLog())
    if (ranks.count(e.thread) == 0) only_ranks = false;
  return only_ranks;
}

// Staged on the stream (WEFT_CUDA_STREAM_WAIT=memop, WEFT_CUDA_PATH=staged: the
// multi-host case): each call returns while the stream is still busy ahead of it, the
// results are right once the stream has run, and no thread but the caller's touched the
// device (NCCL's rule).
class FakeStagedStreams : public ::testing::TestWithParam<int> {};

TEST_P(FakeStagedStreams, ReturnAtOnceAreRightAndOnlyTheCallerCallsTheDevice) {
  const int n = GetParam();
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", "memop");
  ScopedEnv path("WEFT_CUDA_PATH", "staged");
  const size_t per = 40, total = per * n;
  std::atomic<double> slowest_ms{0};
  bool only_callers = OnlyRankThreadsCalledTheDevice(n, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    auto s = static_cast<weftStream_t>(stream.value());
    std::vector<int32_t> mine(total), sum(total, 0);
    for (size_t i = 0; i < total; ++i) {
      mine[i] = Value(rank, i);
      for (int r = 0; r < n; ++r) sum[i] += Value(r, i);
    }
    int32_t* buf = DeviceInts(std::vector<int32_t>(total, 0));
    int32_t* gathered = DeviceInts(std::vector<int32_t>(total * n, 0));
    ASSERT_TRUE(Fake().DelayAsync(200'000, s).ok());
    ASSERT_TRUE(Fake().CopyAsync(buf, mine.data(), total * sizeof(int32_t), s).ok());
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(weftAllReduceStream(buf, buf, total, weftInt32, weftSum, comm, s), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftAllGatherStream(buf, gathered, total, weftInt32, comm, s), weftSuccess)
        << weftGetLastError(comm);
    // In place: this rank's block of the (reduced) buffer.
    ASSERT_EQ(weftReduceScatterStream(buf, buf + rank * per, per, weftInt32, weftSum, comm, s),
              weftSuccess)
        << weftGetLastError(comm);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    double seen = slowest_ms.load();
    while (ms > seen && !slowest_ms.compare_exchange_weak(seen, ms)) {
    }
    std::vector<int32_t> got(total), all(total * n);
    ASSERT_TRUE(Fake().CopyAsync(got.data(), buf, total * sizeof(int32_t), s).ok());
    ASSERT_TRUE(Fake().CopyAsync(all.data(), gathered, total * n * sizeof(int32_t), s).ok());
    ASSERT_TRUE(Fake().SyncStream(s, Deadline::AfterSeconds(60)).ok());
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(std::equal(sum.begin(), sum.end(), all.begin() + r * total))
          << "rank " << rank << ": allgather block " << r;
    for (size_t i = 0; i < per; ++i)
      EXPECT_EQ(got[rank * per + i], n * sum[rank * per + i]) << "rank " << rank << " elem " << i;
    weftResult_t async = weftSuccess;
    EXPECT_EQ(weftCommGetAsyncError(comm, &async), weftSuccess);
    EXPECT_EQ(async, weftSuccess);
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
    Fake().FreeDevice(gathered);
  });
  EXPECT_TRUE(only_callers) << "a worker thread called the device";
  // The stream was held for 200 ms ahead of the three calls: had any waited for it, the
  // slowest rank would show it.
  EXPECT_LT(slowest_ms.load(), 150.0);
  std::printf("%d ranks: three staged stream calls returned within %.2f ms (slowest rank)\n",
              n, slowest_ms.load());
}

INSTANTIATE_TEST_SUITE_P(Ranks, FakeStagedStreams, ::testing::Values(2, 4, 9));

// The direct path (one host) still runs on the worker behind the gate: its worker calls
// the device. This pins the difference down until the direct path is staged on the
// stream too.
TEST(FakeStreamCalls, TheDirectPathsWorkerStillCallsTheDevice) {
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", "memop");
  ScopedEnv path("WEFT_CUDA_PATH", "direct");
  bool only_callers = OnlyRankThreadsCalledTheDevice(2, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    auto s = static_cast<weftStream_t>(stream.value());
    int32_t* buf = DeviceInts(std::vector<int32_t>(8, rank + 1));
    ASSERT_EQ(weftAllReduceStream(buf, buf, 8, weftInt32, weftSum, comm, s), weftSuccess);
    ASSERT_TRUE(Fake().SyncStream(s, Deadline::AfterSeconds(60)).ok());
    EXPECT_EQ(HostInts(buf, 8), std::vector<int32_t>(8, 3));
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
  });
  EXPECT_FALSE(only_callers);
}

}  // namespace
}  // namespace weft::gpu
