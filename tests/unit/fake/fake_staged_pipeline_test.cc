// The staged path in overlapping chunks (comm/staged_pipeline.h) on the CPU fake: results
// of the chunked collectives at 2, 4 and 9 thread ranks, in place and out of place, a
// partial last chunk, and the setting's bad values. Its overlap is measured by
// bench/fake_gpu_bench.cc, not timed here. Proven on a CPU only.
#include <gtest/gtest.h>
#include <stdlib.h>

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

int32_t Value(int rank, size_t i) { return (rank + 1) * 1000 + static_cast<int32_t>(i % 997); }

// 4096-byte chunks: 10007 int32 are 9 whole chunks and a partial tenth.
constexpr size_t kCount = 10007;

class FakeStagedPipeline : public ::testing::TestWithParam<int> {};

TEST_P(FakeStagedPipeline, ChunkedAllReduceBroadcastAndReduceAreRight) {
  const int n = GetParam();
  ASSERT_NE(ActiveFake(), nullptr);
  ScopedEnv path("WEFT_CUDA_PATH", "staged");
  ScopedEnv chunk("WEFT_CUDA_STAGE_CHUNK", "4096");
  (void)Fake().TakeLog();
  RunRanks(n, [&](int rank, weftComm_t comm) {
    std::vector<int32_t> mine(kCount), sum(kCount, 0);
    for (size_t i = 0; i < kCount; ++i) {
      mine[i] = Value(rank, i);
      for (int r = 0; r < n; ++r) sum[i] += Value(r, i);
    }
    int32_t* in = DeviceInts(mine);
    int32_t* out = DeviceInts(std::vector<int32_t>(kCount, -1));
    ASSERT_EQ(weftAllReduce(in, out, kCount, weftInt32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(HostInts(out, kCount), sum) << "rank " << rank << ": allreduce out of place";
    ASSERT_EQ(weftAllReduce(in, in, kCount, weftInt32, weftSum, comm), weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(HostInts(in, kCount), sum) << "rank " << rank << ": allreduce in place";

    // Broadcast in place from rank 1: every rank ends with rank 1's values.
    ASSERT_TRUE(Fake().Write(in, mine.data(), kCount * sizeof(int32_t)).ok());
    ASSERT_EQ(weftBroadcast(in, in, kCount, weftInt32, 1, comm), weftSuccess)
        << weftGetLastError(comm);
    std::vector<int32_t> from1(kCount);
    for (size_t i = 0; i < kCount; ++i) from1[i] = Value(1, i);
    EXPECT_EQ(HostInts(in, kCount), from1) << "rank " << rank << ": broadcast";

    // Reduce out of place to the last rank (past the first batch of 8 at 9 ranks).
    ASSERT_TRUE(Fake().Write(in, mine.data(), kCount * sizeof(int32_t)).ok());
    ASSERT_TRUE(Fake().Write(out, std::vector<int32_t>(kCount, -1).data(),
                             kCount * sizeof(int32_t)).ok());
    ASSERT_EQ(weftReduce(in, out, kCount, weftInt32, weftSum, n - 1, comm), weftSuccess)
        << weftGetLastError(comm);
    if (rank == n - 1) {
      EXPECT_EQ(HostInts(out, kCount), sum) << "reduce at the root";
    }
    Fake().FreeDevice(in);
    Fake().FreeDevice(out);
  });
  // Chunked, not one copy each way: each rank's copies down record an event per chunk
  // (10 per call; three calls copy down on every rank, the broadcast on rank 1 only),
  // besides the one every call records on the caller's stream for its gate.
  size_t events = 0;
  for (const auto& e : Fake().TakeLog()) events += e.call == "RecordEvent";
  EXPECT_EQ(events, static_cast<size_t>(10 * (3 * n + 1) + 4 * n));
}

INSTANTIATE_TEST_SUITE_P(Ranks, FakeStagedPipeline, ::testing::Values(2, 4, 9));

// Staged on the caller's stream (memop): each chunk has its own ready and go flags, so the
// stream waits for a go per chunk, and the results are right once the stream has run.
TEST_P(FakeStagedPipeline, ChunkedOnTheStreamAreRight) {
  const int n = GetParam();
  ASSERT_NE(ActiveFake(), nullptr);
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", "memop");
  ScopedEnv path("WEFT_CUDA_PATH", "staged");
  ScopedEnv chunk("WEFT_CUDA_STAGE_CHUNK", "4096");
  (void)Fake().TakeLog();
  RunRanks(n, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    auto st = static_cast<weftStream_t>(stream.value());
    std::vector<int32_t> mine(kCount), sum(kCount, 0);
    for (size_t i = 0; i < kCount; ++i) {
      mine[i] = Value(rank, i);
      for (int r = 0; r < n; ++r) sum[i] += Value(r, i);
    }
    int32_t* in = DeviceInts(mine);
    int32_t* out = DeviceInts(std::vector<int32_t>(kCount, -1));
    ASSERT_TRUE(Fake().DelayAsync(50'000, st).ok());
    ASSERT_EQ(weftAllReduceStream(in, out, kCount, weftInt32, weftSum, comm, st), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftAllReduceStream(in, in, kCount, weftInt32, weftSum, comm, st), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(60)).ok());
    EXPECT_EQ(HostInts(out, kCount), sum) << "rank " << rank << ": out of place";
    EXPECT_EQ(HostInts(in, kCount), sum) << "rank " << rank << ": in place";
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(in);
    Fake().FreeDevice(out);
  });
  size_t waits = 0;
  for (const auto& e : Fake().TakeLog()) waits += e.call == "WaitFlagAsync";
  EXPECT_EQ(waits, static_cast<size_t>(10 * 2 * n)) << "one go per chunk, 10 chunks, 2 calls";
}

TEST(FakeStagedPipelineSetting, BadValuesAreRefusedByName) {
  ASSERT_NE(ActiveFake(), nullptr);
  ScopedEnv path("WEFT_CUDA_PATH", "staged");
  for (const char* bad : {"100", "-1", "4k"}) {
    ScopedEnv chunk("WEFT_CUDA_STAGE_CHUNK", bad);
    RunRanks(2, [&](int rank, weftComm_t comm) {
      int32_t* buf = DeviceInts(std::vector<int32_t>(16, rank));
      EXPECT_NE(weftAllReduce(buf, buf, 16, weftInt32, weftSum, comm), weftSuccess);
      EXPECT_NE(std::string(weftGetLastError(comm)).find("WEFT_CUDA_STAGE_CHUNK"),
                std::string::npos)
          << bad << ": " << weftGetLastError(comm);
      Fake().FreeDevice(buf);
    });
  }
}

}  // namespace
}  // namespace weft::gpu
