// Group calls on streams, on the CPU fake (gpu/fake_device.h) with thread ranks: the
// calls of a group share one place on their stream (comm/call_group.h), and are put on
// it at weftGroupEnd, as in NCCL. Both ways of holding the stream: the synchronous
// default and stream memory operations (WEFT_CUDA_STREAM_WAIT=memop).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../api/harness.h"
#include "fake_buffers.h"
#include "gpu/fake_device.h"
#include "weft/weft.h"

namespace weft::gpu {
namespace {

using weft::gpu::testing::DeviceInts;
using weft::gpu::testing::Fake;
using weft::gpu::testing::HostInts;
using weft::testing::RunRanks;
using weft::testing::ScopedEnv;

class FakeGroupCalls : public ::testing::TestWithParam<const char*> {};

TEST_P(FakeGroupCalls, SendsBeforeReceivesOnOneStreamComplete) {
  // Both ranks send before they receive, on one stream, 16 MiB: more than a transport
  // holds before the receiver takes it. Outside a group the receive's turn on the stream
  // comes only after the send has completed, on both ranks, so neither would; in a group
  // they share the stream's place and progress together. A collective joins them.
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  const size_t count = 4 << 20;
  RunRanks(2, [&](int rank, weftComm_t comm) {
    const int peer = 1 - rank;
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    auto s = static_cast<weftStream_t>(stream.value());
    int32_t* out = DeviceInts(std::vector<int32_t>(count, rank + 1));
    int32_t* in = DeviceInts(std::vector<int32_t>(count, -1));
    int32_t* sum = DeviceInts({rank + 10});
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftSendStream(out, count, weftInt32, peer, comm, s), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftRecvStream(in, count, weftInt32, peer, comm, s), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftAllReduceStream(sum, sum, 1, weftInt32, weftSum, comm, s), weftSuccess)
        << weftGetLastError(comm);
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    // Work queued on the stream after the group waits for all of it.
    std::vector<int32_t> got(count, 0);
    int32_t total = 0;
    ASSERT_TRUE(Fake().CopyAsync(got.data(), in, count * sizeof(int32_t), stream.value()).ok());
    ASSERT_TRUE(Fake().CopyAsync(&total, sum, sizeof(int32_t), stream.value()).ok());
    ASSERT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(60)).ok());
    EXPECT_EQ(got, std::vector<int32_t>(count, peer + 1)) << "rank " << rank;
    EXPECT_EQ(total, 21) << "rank " << rank;
    Fake().DestroyStream(stream.value());
    for (int32_t* p : {out, in, sum}) Fake().FreeDevice(p);
  });
}

TEST_P(FakeGroupCalls, GroupEndPutsTheCallsOnTheStream) {
  // As in NCCL, a grouped call is put on its stream by weftGroupEnd: a copy the caller
  // queues on the stream between the call and the end is its input.
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  const size_t count = 1000;
  RunRanks(3, [&](int rank, weftComm_t comm) {
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    int32_t* buf = DeviceInts(std::vector<int32_t>(count, 0));
    std::vector<int32_t> mine(count, rank + 1);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    ASSERT_EQ(weftAllReduceStream(buf, buf, count, weftInt32, weftSum, comm,
                                  static_cast<weftStream_t>(stream.value())),
              weftSuccess)
        << weftGetLastError(comm);
    ASSERT_TRUE(Fake().CopyAsync(buf, mine.data(), count * sizeof(int32_t), stream.value()).ok());
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
    ASSERT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(60)).ok());
    EXPECT_EQ(HostInts(buf, count), std::vector<int32_t>(count, 1 + 2 + 3)) << "rank " << rank;
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
  });
}

TEST_P(FakeGroupCalls, AFailedCallInTheGroupIsReportedByGroupEnd) {
  // Rank 0 sends 64 ints, rank 1 receives 128, on device buffers in a group: the size
  // check fails the receive, and both ranks learn it at the end (rank 0 through the
  // barrier of the same group). Each rank has its own stream: thread ranks share the
  // process's default stream, where one rank's calls would wait behind the other's.
  ScopedEnv wait("WEFT_CUDA_STREAM_WAIT", GetParam());
  ScopedEnv timeout("WEFT_TIMEOUT", "30");
  RunRanks(2, [&](int rank, weftComm_t comm) {
    const size_t count = rank == 0 ? 64 : 128;
    int32_t* buf = DeviceInts(std::vector<int32_t>(count, 1));
    auto stream = Fake().CreateStream();
    ASSERT_TRUE(stream.ok());
    auto s = static_cast<weftStream_t>(stream.value());
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    if (rank == 0)
      ASSERT_EQ(weftSendStream(buf, count, weftInt32, 1, comm, s), weftSuccess);
    else
      ASSERT_EQ(weftRecvStream(buf, count, weftInt32, 0, comm, s), weftSuccess);
    ASSERT_EQ(weftBarrier(comm), weftSuccess);
    // With memop the stream holds the stream calls, not weftGroupEnd; the barrier is
    // waited for in both modes, and fails once the receive has.
    weftResult_t ended = weftGroupEnd();
    EXPECT_NE(ended, weftSuccess) << "rank " << rank;
    std::string error = weftGetLastError(comm);
    EXPECT_NE(error.find("different counts"), std::string::npos)
        << "rank " << rank << ": " << error;
    ASSERT_TRUE(Fake().SyncStream(stream.value(), Deadline::AfterSeconds(60)).ok());
    Fake().DestroyStream(stream.value());
    Fake().FreeDevice(buf);
  });
}

INSTANTIATE_TEST_SUITE_P(StreamWait, FakeGroupCalls, ::testing::Values("sync", "memop"));

}  // namespace
}  // namespace weft::gpu
