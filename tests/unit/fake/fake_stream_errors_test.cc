// Errors on streams, on the CPU fake with NCCL's semantics (WEFT_CUDA_STREAM_WAIT=memop):
// an abort or a timeout while a caller's stream is held behind a collective that cannot
// complete (its peer never calls) releases the stream, so no device work is left waiting
// forever, and weftCommGetAsyncError reports the failure with its cause. Both the call
// staged on the stream (WEFT_CUDA_PATH=staged) and the gated direct path. CPU only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../api/harness.h"
#include "fake_buffers.h"
#include "gpu/fake_device.h"
#include "weft/weft.h"

namespace weft::gpu {
namespace {


using weft::testing::ScopedEnv;
using weft::gpu::testing::Fake;


enum class Cause { kAbort, kTimeout };

struct Case {
  const char* path;  // WEFT_CUDA_PATH
  Cause cause;
};

class FakeStreamErrors : public ::testing::TestWithParam<Case> {};

// The first error weftCommGetAsyncError reports on `comm` within 10 s (an error may
// trail the stream's release by the worker's bookkeeping, or reach a peer a little later).
weftResult_t AsyncErrorOf(weftComm_t comm) {
  weftResult_t async = weftSuccess;
  for (int i = 0; i < 1000 && async == weftSuccess; ++i) {
    EXPECT_EQ(weftCommGetAsyncError(comm, &async), weftSuccess);
    if (async == weftSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return async;
}

// Rank 0 queues an allreduce on its stream and, behind it, a marker copy; rank 1 does not
// join. weftCommAbort on rank 0 from another thread after 300 ms (which frees rank 0's
// communicator, as ncclCommAbort does), or the 1 s WEFT_TIMEOUT, must end the call and let
// the stream run the marker. After the abort, rank 1's calls fail naming rank 0 and the
// communicators report the cause through weftCommGetAsyncError.
TEST_P(FakeStreamErrors, ReleaseTheHeldStreamAndReportTheCause) {
  const Case c = GetParam();
  ASSERT_NE(ActiveFake(), nullptr);
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", "memop");
  ScopedEnv path("WEFT_CUDA_PATH", c.path);
  ScopedEnv timeout("WEFT_TIMEOUT", c.cause == Cause::kTimeout ? "1" : "60");
  const bool abort = c.cause == Cause::kAbort;
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comms[2] = {nullptr, nullptr};
  {
    std::vector<std::thread> init;
    for (int r = 0; r < 2; ++r)
      init.emplace_back([&, r] { EXPECT_EQ(weftCommInitRank(&comms[r], 2, id, r), weftSuccess); });
    for (auto& t : init) t.join();
  }
  ASSERT_NE(comms[0], nullptr);
  ASSERT_NE(comms[1], nullptr);

  auto stream = Fake().CreateStream();
  ASSERT_TRUE(stream.ok());
  auto s = static_cast<weftStream_t>(stream.value());
  auto buf = Fake().AllocDevice(64 * sizeof(int32_t));
  ASSERT_TRUE(buf.ok());
  int32_t marker_src = 42, marker = 0;
  ASSERT_EQ(weftAllReduceStream(buf.value(), buf.value(), 64, weftInt32, weftSum, comms[0], s),
            weftSuccess)
      << weftGetLastError(comms[0]);
  ASSERT_TRUE(Fake().CopyAsync(&marker, &marker_src, sizeof(marker), s).ok());
  std::thread aborter;
  if (abort)
    aborter = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      EXPECT_EQ(weftCommAbort(comms[0]), weftSuccess);
    });
  const auto start = std::chrono::steady_clock::now();
  // Bounded: the stream is released within seconds of the abort or the timeout.
  EXPECT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(30)).ok())
      << "the stream stayed held";
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (aborter.joinable()) aborter.join();
  EXPECT_EQ(marker, 42) << "the work queued after the call did not run";
  EXPECT_LT(waited, 20.0);

  if (abort) {
    // Rank 1's next call fails naming rank 0, its stream is released too, and its
    // communicator reports the failure.
    auto stream1 = Fake().CreateStream();
    ASSERT_TRUE(stream1.ok());
    auto buf1 = Fake().AllocDevice(64 * sizeof(int32_t));
    ASSERT_TRUE(buf1.ok());
    // Its first call may still complete, rightly: rank 0's contribution was sent before
    // the abort. The next one cannot.
    for (int call = 0; call < 2; ++call) {
      (void)weftAllReduceStream(buf1.value(), buf1.value(), 64, weftInt32, weftSum, comms[1],
                                static_cast<weftStream_t>(stream1.value()));
      EXPECT_TRUE(Fake().SyncStream(stream1.value(), Deadline::AfterSeconds(30)).ok())
          << "rank 1's stream stayed held";
    }
    const weftResult_t async = AsyncErrorOf(comms[1]);
    const std::string why = weftGetLastError(comms[1]);
    EXPECT_NE(async, weftSuccess) << "rank 1 was not told of rank 0's abort";
    EXPECT_NE(why.find("rank 0"), std::string::npos) << why;
    Fake().FreeDevice(buf1.value());
    Fake().DestroyStream(stream1.value());
  } else {
    const weftResult_t async = AsyncErrorOf(comms[0]);
    const std::string why = weftGetLastError(comms[0]);
    EXPECT_EQ(async, weftTimeout) << why;
    EXPECT_NE(why.find("WEFT_TIMEOUT"), std::string::npos) << why;
    EXPECT_NE(why.find("rank 0"), std::string::npos) << why;
    // Later calls are refused at once with the cause.
    EXPECT_NE(weftAllReduceStream(buf.value(), buf.value(), 64, weftInt32, weftSum, comms[0], s),
              weftSuccess);
    EXPECT_EQ(weftCommDestroy(comms[0]), weftSuccess);
  }
  EXPECT_EQ(weftCommAbort(comms[1]), weftSuccess);
  Fake().FreeDevice(buf.value());
  Fake().DestroyStream(stream.value());
}

INSTANTIATE_TEST_SUITE_P(
    Paths, FakeStreamErrors,
    ::testing::Values(Case{"staged", Cause::kAbort}, Case{"staged", Cause::kTimeout},
                      Case{"direct", Cause::kAbort}, Case{"direct", Cause::kTimeout}),
    [](const auto& info) {
      return std::string(info.param.path) +
             (info.param.cause == Cause::kAbort ? "_abort" : "_timeout");
    });

}  // namespace
}  // namespace weft::gpu
