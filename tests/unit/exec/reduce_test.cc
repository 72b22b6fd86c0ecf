#include "exec/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/half.h"
#include "exec/reduce_internal.h"
#include "exec/streaming_store.h"
#include "half_reference.h"

namespace weft::exec {
namespace {

// --- Test-side descriptions of each dtype: a scalar reference written independently
// of reduce.cc (integers through 64-bit wrap-around, halves through the reference
// conversions), a random generator, and an equality. ---------------------------------

template <typename T>
struct IntRef {
  using Storage = T;
  static T Random(std::mt19937_64& rng) { return static_cast<T>(rng()); }  // full range
  static T Apply(RedOp op, T a, T b) {
    // Two's-complement wrap: compute mod 2^64, keep the low bits.
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (op) {
      case RedOp::kSum:
      case RedOp::kAvg:
        return static_cast<T>(ua + ub);
      case RedOp::kProd:
        return static_cast<T>(ua * ub);
      case RedOp::kMin:
        return std::min(a, b);
      case RedOp::kMax:
        return std::max(a, b);
    }
    return 0;
  }
  static T Divide(T a, int d) { return static_cast<T>(a / static_cast<T>(d)); }
  static bool Same(T a, T b) { return a == b; }
  static std::string Show(T a) { return std::to_string(+a); }
};

// Float min/max as documented in reduce.cc: dst keeps its NaN, a NaN in src is ignored.
template <typename F>
F RefOp(RedOp op, F a, F b) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg:
      return a + b;
    case RedOp::kProd:
      return a * b;
    case RedOp::kMin:
      return b < a ? b : a;
    case RedOp::kMax:
      return b > a ? b : a;
  }
  return 0;
}

template <typename F>
bool SameFloat(F a, F b) {
  // NaN payloads depend on operand order, which the vectoriser may swap.
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(F)) == 0;  // also tells -0 from +0
}

template <typename F>
struct FloatRef {
  using Storage = F;
  static F Random(std::mt19937_64& rng) {
    // Half arbitrary bit patterns (infinities, NaNs, subnormals, huge and tiny),
    // half ordinary values whose products and sums stay finite.
    if (rng() & 1) {
      F f;
      const uint64_t bits = rng();
      std::memcpy(&f, &bits, sizeof(F));
      return f;
    }
    return static_cast<F>(std::uniform_real_distribution<double>(-100, 100)(rng));
  }
  static F Apply(RedOp op, F a, F b) { return RefOp(op, a, b); }
  static F Divide(F a, int d) { return a / static_cast<F>(d); }
  static bool Same(F a, F b) { return SameFloat(a, b); }
  static std::string Show(F a) { return std::to_string(a); }
};

template <uint16_t (*kNarrow)(float), float (*kWiden)(uint16_t)>
struct HalfRef {
  using Storage = uint16_t;
  static uint16_t Random(std::mt19937_64& rng) {
    return static_cast<uint16_t>(rng());  // every pattern, NaN and infinity included
  }
  static uint16_t Apply(RedOp op, uint16_t a, uint16_t b) {
    return kNarrow(RefOp(op, kWiden(a), kWiden(b)));
  }
  static uint16_t Divide(uint16_t a, int d) { return kNarrow(kWiden(a) / d); }
  static bool Same(uint16_t a, uint16_t b) { return SameFloat(kWiden(a), kWiden(b)); }
  static std::string Show(uint16_t a) { return std::to_string(kWiden(a)); }
};

// In DataType order.
using Refs =
    std::tuple<IntRef<int8_t>, IntRef<uint8_t>, IntRef<int32_t>, IntRef<uint32_t>, IntRef<int64_t>,
               IntRef<uint64_t>, HalfRef<testing::RefFloatToFp16, testing::RefFp16ToFloat>,
               HalfRef<testing::RefFloatToBf16, testing::RefBf16ToFloat>, FloatRef<float>,
               FloatRef<double>>;

// Calls f.template operator()<Ref>() for the Ref of `dtype`.
template <typename F, size_t I = 0>
void WithRef(DataType dtype, F&& f) {
  if constexpr (I < std::tuple_size_v<Refs>) {
    if (static_cast<size_t>(dtype) == I) {
      f.template operator()<std::tuple_element_t<I, Refs>>();
    } else {
      WithRef<F, I + 1>(dtype, std::forward<F>(f));
    }
  }
}

// The largest count crosses every unrolled loop and many of ReduceIntoStreaming's 4 KiB
// blocks, with a tail. WEFT_TEST_LARGE_COUNT (a count above 4096) replaces it: the
// aarch64 run under qemu (scripts/cross-aarch64.sh) takes 65539, which still spans 16 or
// more blocks at every element size, where 1000003 cost it over 100 s of emulation.
size_t LargeCount() {
  static const size_t count = [] {
    const char* env = std::getenv("WEFT_TEST_LARGE_COUNT");
    if (env == nullptr) return size_t{1000003};
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end == env || *end != '\0' || v <= 4096) {
      ADD_FAILURE() << "WEFT_TEST_LARGE_COUNT must be a count above 4096, got '" << env << "'";
      return size_t{1000003};
    }
    return static_cast<size_t>(v);
  }();
  return count;
}

std::vector<size_t> Counts() { return {0, 1, 7, LargeCount()}; }

// --- Every dtype x op x instruction set, against the scalar reference -----------------

using internal::ReduceIsa;

// The variants built for this architecture; those this CPU cannot run are skipped.
std::vector<ReduceIsa> BuiltIsas() {
  std::vector<ReduceIsa> built;
  for (ReduceIsa isa : internal::kAllReduceIsas)
    if (internal::IsaBuilt(isa)) built.push_back(isa);
  return built;
}

class ReduceAllTest : public ::testing::TestWithParam<std::tuple<int, int, ReduceIsa>> {
 protected:
  ReduceFn Kernel() const {
    return internal::GetReduceFnForIsa(static_cast<DataType>(std::get<0>(GetParam())),
                                       static_cast<RedOp>(std::get<1>(GetParam())),
                                       std::get<2>(GetParam()));
  }
};

TEST_P(ReduceAllTest, MatchesScalarReference) {
  const DataType dtype = static_cast<DataType>(std::get<0>(GetParam()));
  const RedOp op = static_cast<RedOp>(std::get<1>(GetParam()));
  const ReduceFn fn = Kernel();
  if (fn == nullptr) GTEST_SKIP() << "this CPU cannot run the variant";
  WithRef(dtype, [&]<typename Ref>() {
    using S = typename Ref::Storage;
    std::mt19937_64 rng(std::get<0>(GetParam()) * 31 + std::get<1>(GetParam()));
    for (size_t count : Counts()) {
      // Element offsets 0/1 for dst and src: buffers not aligned to any vector width,
      // and mutually misaligned, so no alignment peeling can line both up.
      for (size_t doff : {0, 1}) {
        for (size_t soff : {0, 1}) {
          std::vector<S> dst(count + 2), src(count + 2);
          for (auto& v : dst) v = Ref::Random(rng);
          for (auto& v : src) v = Ref::Random(rng);
          std::vector<S> want = dst;
          for (size_t i = 0; i < count; ++i)
            want[doff + i] = Ref::Apply(op, dst[doff + i], src[soff + i]);
          fn(dst.data() + doff, src.data() + soff, count);
          // Every element, including the ones just outside [doff, doff + count).
          for (size_t i = 0; i < dst.size(); ++i) {
            ASSERT_TRUE(Ref::Same(dst[i], want[i]))
                << "count=" << count << " doff=" << doff << " soff=" << soff << " i=" << i
                << " got " << Ref::Show(dst[i]) << " want " << Ref::Show(want[i]);
          }
        }
      }
    }
  });
}

TEST_P(ReduceAllTest, DstEqualsSrc) {
  const DataType dtype = static_cast<DataType>(std::get<0>(GetParam()));
  const RedOp op = static_cast<RedOp>(std::get<1>(GetParam()));
  WithRef(dtype, [&]<typename Ref>() {
    using S = typename Ref::Storage;
    std::mt19937_64 rng(7);
    std::vector<S> buf(1001);
    for (auto& v : buf) v = Ref::Random(rng);
    std::vector<S> want(buf.size());
    for (size_t i = 0; i < buf.size(); ++i) want[i] = Ref::Apply(op, buf[i], buf[i]);
    const ReduceFn fn = Kernel();
    if (fn == nullptr) GTEST_SKIP() << "this CPU cannot run the variant";
    fn(buf.data(), buf.data(), buf.size());
    for (size_t i = 0; i < buf.size(); ++i) ASSERT_TRUE(Ref::Same(buf[i], want[i])) << i;
  });
}

// ReduceInto (dst = a op b, the executor's fused copy + reduce) against the reference,
// with dst apart from a and dst == a (an in-place call), misaligned as above.
TEST_P(ReduceAllTest, ReduceIntoMatchesScalarReference) {
  const DataType dtype = static_cast<DataType>(std::get<0>(GetParam()));
  const RedOp op = static_cast<RedOp>(std::get<1>(GetParam()));
  const ReduceIntoFn fn = internal::GetReduceIntoFnForIsa(dtype, op, std::get<2>(GetParam()));
  if (fn == nullptr) GTEST_SKIP() << "this CPU cannot run the variant";
  WithRef(dtype, [&]<typename Ref>() {
    using S = typename Ref::Storage;
    std::mt19937_64 rng(std::get<0>(GetParam()) * 37 + std::get<1>(GetParam()));
    for (size_t count : Counts()) {
      for (bool dst_is_a : {false, true}) {
        for (size_t off : {0, 1}) {
          for (bool streaming : {false, true}) {  // exec/streaming_store.h
            std::vector<S> a(count + 2), b(count + 2), dst(count + 2);
            for (auto& v : a) v = Ref::Random(rng);
            for (auto& v : b) v = Ref::Random(rng);
            for (auto& v : dst) v = Ref::Random(rng);
            std::vector<S>& out = dst_is_a ? a : dst;
            std::vector<S> want = out;
            for (size_t i = 0; i < count; ++i) want[1 + i] = Ref::Apply(op, a[1 + i], b[off + i]);
            if (streaming) {
              ReduceIntoStreaming(fn, sizeof(S), out.data() + 1, a.data() + 1, b.data() + off,
                                  count);
            } else {
              fn(out.data() + 1, a.data() + 1, b.data() + off, count);
            }
            for (size_t i = 0; i < out.size(); ++i) {
              ASSERT_TRUE(Ref::Same(out[i], want[i]))
                  << "count=" << count << " dst_is_a=" << dst_is_a << " off=" << off
                  << " streaming=" << streaming << " i=" << i << " got " << Ref::Show(out[i])
                  << " want " << Ref::Show(want[i]);
            }
          }
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    AllTypesAllOps, ReduceAllTest,
    ::testing::Combine(::testing::Range(0, kNumDataTypes), ::testing::Range(0, kNumRedOps),
                       ::testing::ValuesIn(BuiltIsas())),
    [](const auto& info) {
      std::string isa = internal::ReduceIsaName(std::get<2>(info.param));
      for (char& c : isa)
        if (c == '-') c = '_';
      return std::string(DataTypeName(static_cast<DataType>(std::get<0>(info.param)))) + "_" +
             RedOpName(static_cast<RedOp>(std::get<1>(info.param))) + "_" + isa;
    });

// Streaming stores: every head/body/tail split of the 16-byte alignment, and nothing
// written outside the range.
TEST(StreamingCopyTest, EveryAlignmentAndLength) {
  std::vector<uint8_t> src(5000), dst(5100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t doff = 0; doff < 17; ++doff) {
    for (size_t soff : {0, 3}) {
      for (size_t bytes : {0, 1, 15, 16, 17, 63, 64, 65, 127, 4000}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        StreamingCopy(dst.data() + doff, src.data() + soff, bytes);
        StreamingFence();
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= doff && i < doff + bytes;
          ASSERT_EQ(dst[i], inside ? src[soff + i - doff] : 0xEE)
              << "doff=" << doff << " soff=" << soff << " bytes=" << bytes << " i=" << i;
        }
      }
    }
  }
}

// The selected variant is the last of kAllReduceIsas (the widest) that is built here and
// that this CPU runs: on aarch64 NEON, with BFCVTN where the CPU has FEAT_BF16.
TEST(ReduceTest, SelectsTheWidestVariantThisCpuRuns) {
  ReduceIsa want = ReduceIsa::kGeneric;
  for (ReduceIsa isa : internal::kAllReduceIsas)
    if (internal::IsaBuilt(isa) && internal::CpuRuns(isa)) want = isa;
  EXPECT_EQ(internal::SelectedReduceIsa(), want)
      << "selected " << internal::ReduceIsaName(internal::SelectedReduceIsa());
#if defined(__aarch64__)
  EXPECT_NE(internal::SelectedReduceIsa(), ReduceIsa::kGeneric) << "NEON not selected";
#endif
}

TEST(ReduceTest, GetReduceFnUsesTheSelectedVariant) {
  EXPECT_EQ(
      GetReduceFn(DataType::kFloat16, RedOp::kSum),
      internal::GetReduceFnForIsa(DataType::kFloat16, RedOp::kSum, internal::SelectedReduceIsa()));
}

// --- DivideInPlace -------------------------------------------------------------------

class DivideTest : public ::testing::TestWithParam<int> {};

TEST_P(DivideTest, MatchesScalarReference) {
  const DataType dtype = static_cast<DataType>(GetParam());
  WithRef(dtype, [&]<typename Ref>() {
    using S = typename Ref::Storage;
    std::mt19937_64 rng(GetParam());
    for (size_t count : Counts()) {
      for (int divisor : {1, 2, 3, 7, 64}) {
        std::vector<S> buf(count + 2);
        for (auto& v : buf) v = Ref::Random(rng);
        std::vector<S> want = buf;
        for (size_t i = 1; i <= count; ++i) want[i] = Ref::Divide(buf[i], divisor);
        DivideInPlace(buf.data() + 1, count, dtype, divisor);
        for (size_t i = 0; i < buf.size(); ++i)
          ASSERT_TRUE(Ref::Same(buf[i], want[i]))
              << "count=" << count << " divisor=" << divisor << " i=" << i;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DivideTest, ::testing::Range(0, kNumDataTypes),
                         [](const auto& info) {
                           return std::string(DataTypeName(static_cast<DataType>(info.param)));
                         });

// --- Specific behaviours, spelled out -------------------------------------------------

template <typename T>
T Reduce1(DataType dt, RedOp op, T a, T b) {
  GetReduceFn(dt, op)(&a, &b, 1);
  return a;
}

TEST(ReduceTest, IntegersWrapAround) {
  EXPECT_EQ(Reduce1<int8_t>(DataType::kInt8, RedOp::kSum, 127, 1), -128);
  EXPECT_EQ(Reduce1<int8_t>(DataType::kInt8, RedOp::kProd, -128, -1), -128);
  EXPECT_EQ(Reduce1<uint8_t>(DataType::kUint8, RedOp::kProd, 255, 255), 1);
  EXPECT_EQ(Reduce1<int32_t>(DataType::kInt32, RedOp::kSum, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(Reduce1<int32_t>(DataType::kInt32, RedOp::kProd, 65536, 65536), 0);
  EXPECT_EQ(Reduce1<uint32_t>(DataType::kUint32, RedOp::kSum, UINT32_MAX, 2), 1u);
  EXPECT_EQ(Reduce1<int64_t>(DataType::kInt64, RedOp::kSum, INT64_MIN, -1), INT64_MAX);
  EXPECT_EQ(Reduce1<int64_t>(DataType::kInt64, RedOp::kProd, INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(Reduce1<uint64_t>(DataType::kUint64, RedOp::kSum, UINT64_MAX, 1), 0u);
}

TEST(ReduceTest, SignedMinMaxCompareAsSigned) {
  EXPECT_EQ(Reduce1<int8_t>(DataType::kInt8, RedOp::kMin, -1, 1), -1);
  EXPECT_EQ(Reduce1<int64_t>(DataType::kInt64, RedOp::kMax, -5, INT64_MIN), -5);
  EXPECT_EQ(Reduce1<uint8_t>(DataType::kUint8, RedOp::kMax, 200, 100), 200);
}

TEST(ReduceTest, FloatMinMaxNaNKeepsDstIgnoresSrc) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Reduce1<float>(DataType::kFloat32, RedOp::kMin, 1.0f, nan), 1.0f);
  EXPECT_TRUE(std::isnan(Reduce1<float>(DataType::kFloat32, RedOp::kMin, nan, 1.0f)));
  EXPECT_EQ(Reduce1<double>(DataType::kFloat64, RedOp::kMax, 1.0, nan), 1.0);
  EXPECT_TRUE(std::isnan(Reduce1<float>(DataType::kFloat32, RedOp::kSum, 1.0f, nan)));
}

TEST(ReduceTest, HalvesRoundOnceAfterWidening) {
  // 2048 + 1 is a tie in float16 (step 2 there): rounds to even 2048.
  const uint16_t a = FloatToFp16(2048.0f), one = FloatToFp16(1.0f);
  EXPECT_EQ(Fp16ToFloat(Reduce1<uint16_t>(DataType::kFloat16, RedOp::kSum, a, one)), 2048.0f);
  // bfloat16 has 8 significant bits: 256 + 1 is a tie and stays 256.
  const uint16_t b = FloatToBf16(256.0f), b1 = FloatToBf16(1.0f);
  EXPECT_EQ(Bf16ToFloat(Reduce1<uint16_t>(DataType::kBfloat16, RedOp::kSum, b, b1)), 256.0f);
}

TEST(ReduceTest, AvgReducesAsSumThenDivides) {
  int32_t v[3] = {-7, 7, 8};
  const int32_t w[3] = {0, 0, 1};
  GetReduceFn(DataType::kInt32, RedOp::kAvg)(v, w, 3);
  DivideInPlace(v, 3, DataType::kInt32, 2);
  EXPECT_EQ(v[0], -3);  // truncation toward zero
  EXPECT_EQ(v[1], 3);
  EXPECT_EQ(v[2], 4);
}

TEST(ReduceTest, InvalidArgumentsGiveNoKernel) {
  EXPECT_EQ(GetReduceFn(static_cast<DataType>(kNumDataTypes), RedOp::kSum), nullptr);
  EXPECT_EQ(GetReduceFn(DataType::kInt8, static_cast<RedOp>(-1)), nullptr);
  int32_t x = 10;
  DivideInPlace(&x, 1, DataType::kInt32, 0);  // no-op rather than a division by zero
  EXPECT_EQ(x, 10);
}

}  // namespace
}  // namespace weft::exec
