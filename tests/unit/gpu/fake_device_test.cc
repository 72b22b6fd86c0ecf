// The CPU fake of the device seam: streams run in order and asynchronously, device
// memory cannot be touched by the host, flags and events order streams, reductions fold
// as the kernel does (in-place included, past the 8-input batch), IPC maps a buffer.
#include "gpu/fake_device.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "gpu/reduce_batches.h"
#include "gpu/reduce_math.h"

namespace weft::gpu {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

class FakeDeviceTest : public ::testing::Test {
 protected:
  FakeDevice dev_{FakeDevice::Options{2, 0}};
  void* Alloc(size_t bytes) {
    auto p = dev_.AllocDevice(bytes);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p.value() : nullptr;
  }
  Deadline Soon() { return Deadline::AfterSeconds(30); }
};

TEST_F(FakeDeviceTest, ClassifiesDeviceMemoryAndNothingElse) {
  void* d = Alloc(100);
  int host = 0;
  EXPECT_TRUE(dev_.Classify(d).device);
  EXPECT_TRUE(dev_.Classify(static_cast<char*>(d) + 99).device);
  EXPECT_EQ(dev_.Classify(d).device_id, 0);
  EXPECT_FALSE(dev_.Classify(&host).device);
  EXPECT_FALSE(dev_.Classify(nullptr).device);
  auto pinned = dev_.AllocPinned(64);
  ASSERT_TRUE(pinned.ok());
  EXPECT_FALSE(dev_.Classify(pinned.value()).device);
  ASSERT_TRUE(dev_.SetDevice(1).ok());
  void* d1 = Alloc(16);
  EXPECT_EQ(dev_.Classify(d1).device_id, 1);
  EXPECT_FALSE(dev_.SetDevice(2).ok());  // two devices
  ASSERT_TRUE(dev_.SetDevice(0).ok());
  dev_.FreeDevice(d);
  dev_.FreeDevice(d1);
  dev_.FreePinned(pinned.value());
}

TEST_F(FakeDeviceTest, HostAccessToDeviceMemoryFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  void* d = Alloc(64);
  EXPECT_DEATH({ *static_cast<volatile char*>(d) = 1; }, "");
  dev_.FreeDevice(d);
}

TEST_F(FakeDeviceTest, AStreamRunsItsWorkInOrderAfterTheCallsReturn) {
  auto s = dev_.CreateStream();
  ASSERT_TRUE(s.ok());
  std::vector<int> src(1000), dst(1000, 0);
  std::iota(src.begin(), src.end(), 1);
  void* d = Alloc(src.size() * sizeof(int));
  const auto start = Clock::now();
  ASSERT_TRUE(dev_.DelayAsync(200'000, s.value()).ok());
  ASSERT_TRUE(dev_.CopyAsync(d, src.data(), src.size() * sizeof(int), s.value()).ok());
  ASSERT_TRUE(dev_.CopyAsync(dst.data(), d, dst.size() * sizeof(int), s.value()).ok());
  EXPECT_LT(MsSince(start), 100.0) << "enqueueing waited for the stream";
  EXPECT_EQ(dst[999], 0) << "the copy ran before the delay ahead of it";
  ASSERT_TRUE(dev_.SyncStream(s.value(), Soon()).ok());
  EXPECT_GE(MsSince(start), 200.0);
  EXPECT_EQ(dst, src);
  dev_.DestroyStream(s.value());
  dev_.FreeDevice(d);
}

TEST_F(FakeDeviceTest, SyncStreamIsBounded) {
  auto s = dev_.CreateStream();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(dev_.DelayAsync(300'000, s.value()).ok());
  Status st = dev_.SyncStream(s.value(), Deadline::AfterSeconds(0.05));
  EXPECT_EQ(st.code(), Code::kDeadlineExceeded) << st.ToString();
  dev_.DestroyStream(s.value());
}

TEST_F(FakeDeviceTest, AFlagHoldsAStreamUntilTheHostWritesIt) {
  auto s = dev_.CreateStream();
  auto flag_mem = dev_.AllocPinned(sizeof(uint32_t));
  ASSERT_TRUE(s.ok() && flag_mem.ok());
  auto* flag = static_cast<uint32_t*>(flag_mem.value());
  auto* done = static_cast<uint32_t*>(dev_.AllocPinned(sizeof(uint32_t)).value());
  ASSERT_TRUE(dev_.WaitFlagAsync(flag, 3, s.value()).ok());
  ASSERT_TRUE(dev_.WriteFlagAsync(done, 1, s.value()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(std::atomic_ref<uint32_t>(*done).load(), 0u);
  std::atomic_ref<uint32_t>(*flag).store(2);  // not yet: GEQ 3
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(std::atomic_ref<uint32_t>(*done).load(), 0u);
  std::atomic_ref<uint32_t>(*flag).store(3);
  ASSERT_TRUE(dev_.SyncStream(s.value(), Soon()).ok());
  EXPECT_EQ(std::atomic_ref<uint32_t>(*done).load(), 1u);
  dev_.DestroyStream(s.value());
}

TEST_F(FakeDeviceTest, AnEventOrdersOneStreamAfterAnother) {
  auto a = dev_.CreateStream(), b = dev_.CreateStream();
  auto ev = dev_.CreateEvent();
  ASSERT_TRUE(a.ok() && b.ok() && ev.ok());
  EXPECT_TRUE(dev_.QueryEvent(ev.value()).value()) << "never recorded: complete";
  auto* done = static_cast<uint32_t*>(dev_.AllocPinned(sizeof(uint32_t)).value());
  ASSERT_TRUE(dev_.DelayAsync(150'000, a.value()).ok());
  ASSERT_TRUE(dev_.RecordEvent(ev.value(), a.value()).ok());
  EXPECT_FALSE(dev_.QueryEvent(ev.value()).value());
  ASSERT_TRUE(dev_.StreamWaitEvent(b.value(), ev.value()).ok());
  ASSERT_TRUE(dev_.WriteFlagAsync(done, 7, b.value()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(std::atomic_ref<uint32_t>(*done).load(), 0u) << "b ran ahead of a's event";
  ASSERT_TRUE(dev_.SyncStream(b.value(), Soon()).ok());
  EXPECT_EQ(std::atomic_ref<uint32_t>(*done).load(), 7u);
  EXPECT_TRUE(dev_.QueryEvent(ev.value()).value());
  dev_.DestroyEvent(ev.value());
  dev_.DestroyStream(a.value());
  dev_.DestroyStream(b.value());
}

// In place at every position, with more inputs than one launch takes: the batches must
// not read the output after an earlier batch overwrote it (ranks 8 and up of a host).
TEST_F(FakeDeviceTest, InPlaceReductionIsRightAtEveryPositionPastTheFirstBatch) {
  const size_t count = 33;
  for (int n : {2, 8, 9, 16, 17}) {
    for (int me = 0; me < n; ++me) {
      std::vector<void*> bufs(n);
      std::vector<const void*> in(n);
      std::vector<int32_t> expect(count, 0);
      for (int r = 0; r < n; ++r) {
        bufs[r] = Alloc(count * sizeof(int32_t));
        std::vector<int32_t> v(count);
        for (size_t i = 0; i < count; ++i) v[i] = (r + 1) * 1000 + static_cast<int32_t>(i);
        for (size_t i = 0; i < count; ++i) expect[i] += v[i];
        ASSERT_TRUE(dev_.Write(bufs[r], v.data(), count * sizeof(int32_t)).ok());
        in[r] = bufs[r];
      }
      ASSERT_TRUE(dev_.ReduceAsync(bufs[me], in.data(), n, count, DataType::kInt32, RedOp::kSum,
                                   1, nullptr)
                      .ok());
      ASSERT_TRUE(dev_.SyncStream(nullptr, Soon()).ok());
      std::vector<int32_t> got(count);
      ASSERT_TRUE(dev_.Read(got.data(), bufs[me], count * sizeof(int32_t)).ok());
      EXPECT_EQ(got, expect) << "n=" << n << " in place at " << me;
      for (void* b : bufs) dev_.FreeDevice(b);
    }
  }
}

TEST(ReduceBatches, AnAliasedLateInputMovesToTheFirstBatch) {
  std::vector<int> storage(20);
  std::vector<const void*> in;
  for (int& x : storage) in.push_back(&x);
  auto batches = PlanReduceBatches(in[12], in.data(), 20, RedOp::kAvg, 20);
  ASSERT_EQ(batches.size(), 3u);  // 8 + (1 + 7) + (1 + 5)
  EXPECT_EQ(batches[0].in[0], in[12]);
  EXPECT_EQ(batches[0].n, 8);
  EXPECT_EQ(batches[1].in[0], in[12]);  // the running result
  EXPECT_EQ(batches[0].op, RedOp::kSum);
  EXPECT_EQ(batches[2].op, RedOp::kAvg);
  EXPECT_EQ(batches[2].divisor, 20);
  int seen = 0;
  for (const auto& b : batches)
    for (int r = (&b == &batches[0] ? 0 : 1); r < b.n; ++r) ++seen;
  EXPECT_EQ(seen, 20) << "every input exactly once";
}

TEST_F(FakeDeviceTest, AKernelCannotReadPageableHostMemory) {
  std::vector<float> host(8, 1.0f);
  void* d = Alloc(8 * sizeof(float));
  const void* in[2] = {host.data(), d};
  Status st = dev_.ReduceAsync(d, in, 2, 8, DataType::kFloat32, RedOp::kSum, 1, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("pageable"), std::string::npos) << st.ToString();
  dev_.FreeDevice(d);
}

TEST_F(FakeDeviceTest, IpcGivesTheAllocationAndTheOffset) {
  char* d = static_cast<char*>(Alloc(4096 * 3));
  auto ref = dev_.ExportIpc(d + 5000);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(ref->offset, 5000u);
  auto base = dev_.OpenIpc(ref.value());
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_EQ(base.value(), d);
  dev_.CloseIpc(base.value());
  int host = 0;
  EXPECT_FALSE(dev_.ExportIpc(&host).ok());
  dev_.FreeDevice(d);
}

TEST_F(FakeDeviceTest, TheLogNamesEachCallAndItsThread) {
  (void)dev_.TakeLog();
  void* d = Alloc(16);
  std::thread([&] { (void)dev_.Classify(d); }).join();
  auto log = dev_.TakeLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].call, "AllocDevice");
  EXPECT_EQ(log[0].thread, std::this_thread::get_id());
  EXPECT_EQ(log[1].call, "Classify");
  EXPECT_NE(log[1].thread, std::this_thread::get_id());
  dev_.FreeDevice(d);
}

TEST(FakeDeviceOptions, BadEnvironmentValuesAreRefusedByName) {
  setenv("WEFT_FAKE_DEVICES", "0", 1);
  auto o = FakeDevice::OptionsFromEnv();
  EXPECT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("WEFT_FAKE_DEVICES"), std::string::npos);
  setenv("WEFT_FAKE_DEVICES", "2", 1);
  setenv("WEFT_FAKE_COPY_GBPS", "fast", 1);
  o = FakeDevice::OptionsFromEnv();
  EXPECT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("WEFT_FAKE_COPY_GBPS"), std::string::npos);
  setenv("WEFT_FAKE_COPY_GBPS", "5", 1);
  o = FakeDevice::OptionsFromEnv();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->devices, 2);
  EXPECT_EQ(o->copy_gbytes_per_s, 5.0);
  unsetenv("WEFT_FAKE_DEVICES");
  unsetenv("WEFT_FAKE_COPY_GBPS");
}

}  // namespace
}  // namespace weft::gpu
