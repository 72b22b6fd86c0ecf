// The CUDA layer at run time. Without a usable GPU (CPU-only CI, or a build without
// WEFT_CUDA) the layer must say so cleanly; with one, the kernel must match the host
// reference exactly for every dtype and op, vectorised or not, and the stream gate must
// hold a stream until released.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/types.h"
#include "gpu/ipc.h"
#include "gpu/reduce_batches.h"
#include "gpu/memory.h"
#include "gpu/reduce_math.h"
#include "gpu/runtime.h"
#include "gpu/stream_gate.h"

namespace weft::gpu {
namespace {

TEST(GpuRuntime, WithoutAGpuEverythingSaysWhy) {
  if (Available()) GTEST_SKIP() << "a GPU is present; the no-GPU behaviour does not apply";
  EXPECT_FALSE(UnavailableReason().empty());
  int x = 0;
  EXPECT_FALSE(Classify(&x).device);
  EXPECT_FALSE(Classify(nullptr).device);
  Status st = ReduceAsync(&x, nullptr, 1, 1, DataType::kInt32, RedOp::kSum, 1, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find(UnavailableReason()), std::string::npos) << st.ToString();
  EXPECT_FALSE(StreamGate::Create().ok());
  EXPECT_FALSE(CreateStream().ok());
  DeviceBuffer d;
  EXPECT_FALSE(d.Reserve(16).ok());
}

#if WEFT_HAVE_CUDA
class GpuKernelTest : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override {
    if (!Available()) GTEST_SKIP() << "no usable GPU: " << UnavailableReason();
  }
};

TEST_P(GpuKernelTest, ReduceNMatchesTheHostReferenceBitForBit) {
  auto [dt_i, op_i] = GetParam();
  const auto dt = static_cast<DataType>(dt_i);
  const auto op = static_cast<RedOp>(op_i);
  const size_t es = DataTypeSize(dt);
  for (int n : {1, 2, 3, 8, 11}) {            // 11: chained launches
    for (size_t count : {size_t{1}, size_t{37}, size_t{100003}}) {
      for (size_t misalign : {size_t{0}, size_t{1}}) {  // scalar path when misaligned
        std::vector<std::vector<char>> host(n, std::vector<char>((count + 1) * es));
        std::vector<const void*> hp;
        uint32_t seed = 12345 + n;
        for (int r = 0; r < n; ++r) {
          for (auto& c : host[r]) {
            seed = seed * 1664525u + 1013904223u;
            c = static_cast<char>(seed >> 24);
          }
          if (dt == DataType::kFloat16 || dt == DataType::kBfloat16 || dt == DataType::kFloat32 ||
              dt == DataType::kFloat64) {
            // Finite values only (random bits make NaNs, whose payloads may differ).
            for (size_t i = 0; i < count + 1; ++i) {
              double v = static_cast<int>((r * 13 + i * 7) % 17) - 8 + 0.25 * (i % 3);
              if (op == RedOp::kProd) v = 1 + 0.5 * ((r + i) % 2);
              if (dt == DataType::kFloat16) reinterpret_cast<uint16_t*>(host[r].data())[i] = FloatToFp16(float(v));
              if (dt == DataType::kBfloat16) reinterpret_cast<uint16_t*>(host[r].data())[i] = FloatToBf16(float(v));
              if (dt == DataType::kFloat32) reinterpret_cast<float*>(host[r].data())[i] = float(v);
              if (dt == DataType::kFloat64) reinterpret_cast<double*>(host[r].data())[i] = v;
            }
          }
          hp.push_back(host[r].data() + misalign * es);
        }
        std::vector<char> expect(count * es);
        // The device folds more than kMaxReduceInputs in batches, rounding in between.
        ReduceBatchedHost(expect.data(), hp.data(), n, count, dt, op, n);
        std::vector<DeviceBuffer> dev(n + 1);
        std::vector<const void*> dp;
        for (int r = 0; r < n; ++r) {
          auto p = dev[r].Reserve((count + 1) * es);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          ASSERT_TRUE(CopyAsync(p.value(), host[r].data(), (count + 1) * es, nullptr).ok());
          dp.push_back(static_cast<char*>(p.value()) + misalign * es);
        }
        auto out = dev[n].Reserve((count + 1) * es);
        ASSERT_TRUE(out.ok());
        char* o = static_cast<char*>(out.value()) + misalign * es;
        Status st = ReduceAsync(o, dp.data(), n, count, dt, op, n, nullptr);
        ASSERT_TRUE(st.ok()) << st.ToString();
        std::vector<char> got(count * es);
        ASSERT_TRUE(CopyAsync(got.data(), o, count * es, nullptr).ok());
        ASSERT_TRUE(SyncStream(nullptr, Deadline::AfterSeconds(30)).ok());
        ASSERT_EQ(0, std::memcmp(got.data(), expect.data(), count * es))
            << DataTypeName(dt) << " " << RedOpName(op) << " n=" << n << " count=" << count
            << " misalign=" << misalign;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTypeAndOp, GpuKernelTest,
                         ::testing::Combine(::testing::Range(0, kNumDataTypes),
                                            ::testing::Range(0, kNumRedOps)));

TEST(GpuStreamGate, HoldsTheStreamUntilReleased) {
  if (!Available()) GTEST_SKIP() << "no usable GPU: " << UnavailableReason();
  setenv("WEFT_CUDA_STREAM_WAIT", "memop", 1);
  auto gate = StreamGate::Create();
  unsetenv("WEFT_CUDA_STREAM_WAIT");
  if (!gate.ok()) GTEST_SKIP() << gate.status().ToString();
  std::printf("stream gate: %s\n", (*gate)->mechanism());
  auto stream = CreateStream();
  ASSERT_TRUE(stream.ok());
  DeviceBuffer buf;
  auto p = buf.Reserve(4);
  ASSERT_TRUE(p.ok());
  int zero = 0, one = 1, got = -1;
  ASSERT_TRUE(CopyAsync(p.value(), &zero, 4, stream.value()).ok());
  ASSERT_TRUE(SyncStream(stream.value(), Deadline::AfterSeconds(10)).ok());
  auto ticket = (*gate)->Begin(stream.value());
  ASSERT_TRUE(ticket.ok()) << ticket.status().ToString();
  ASSERT_TRUE((*gate)->WaitReady(ticket.value(), Deadline::AfterSeconds(10)).ok());
  if ((*gate)->synchronous()) {
    (*gate)->Release(ticket.value());
    DestroyStream(stream.value());
    GTEST_SKIP() << "no stream memory operations here: stream calls are synchronous";
  }
  // Queued behind the gate: must not run before Release.
  ASSERT_TRUE(CopyAsync(p.value(), &one, 4, stream.value()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(CopyAsync(&got, p.value(), 4, nullptr).ok());  // another stream
  ASSERT_TRUE(SyncStream(nullptr, Deadline::AfterSeconds(10)).ok());
  EXPECT_EQ(got, 0) << "the stream ran past an unreleased gate";
  (*gate)->Release(ticket.value());
  ASSERT_TRUE(SyncStream(stream.value(), Deadline::AfterSeconds(10)).ok());
  ASSERT_TRUE(CopyAsync(&got, p.value(), 4, nullptr).ok());
  ASSERT_TRUE(SyncStream(nullptr, Deadline::AfterSeconds(10)).ok());
  EXPECT_EQ(got, 1);
  DestroyStream(stream.value());
}

TEST(GpuStreamGate, SynchronousByDefault) {
  if (!Available()) GTEST_SKIP() << "no usable GPU: " << UnavailableReason();
  auto gate = StreamGate::Create();
  ASSERT_TRUE(gate.ok()) << gate.status().ToString();
  EXPECT_TRUE((*gate)->synchronous());
  auto ticket = (*gate)->Begin(nullptr);
  ASSERT_TRUE(ticket.ok());
  EXPECT_TRUE((*gate)->WaitReady(ticket.value(), Deadline::AfterSeconds(10)).ok());
  (*gate)->Release(ticket.value());
}

TEST(GpuIpc, ExportGivesTheOffsetWithinTheAllocation) {
  if (!Available()) GTEST_SKIP() << "no usable GPU: " << UnavailableReason();
  DeviceBuffer buf;
  auto p = buf.Reserve(1 << 20);
  ASSERT_TRUE(p.ok());
  auto ref = ExportIpc(static_cast<char*>(p.value()) + 4096);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(ref->offset, 4096u);
  int host = 0;
  EXPECT_FALSE(ExportIpc(&host).ok());
}
#endif

}  // namespace
}  // namespace weft::gpu
