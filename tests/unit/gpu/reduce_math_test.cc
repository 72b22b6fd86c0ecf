// The GPU reduction kernel's element arithmetic (gpu/reduce_math.h), run on the CPU:
// the host reference must agree with the CPU library's reduction for every dtype and
// op, so the device path and the host path compute the same thing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/half.h"
#include "core/types.h"
#include "exec/reduce.h"
#include "gpu/reduce_math.h"

namespace weft::gpu {
namespace {

// Small integer values: exact in every type, so pairwise (CPU) and all-at-once (GPU)
// rounding agree bit for bit.
void Fill(DataType t, void* p, size_t n, int rank, RedOp op) {
  for (size_t i = 0; i < n; ++i) {
    int v = op == RedOp::kProd ? 1 + static_cast<int>((rank + i) % 2)
                               : static_cast<int>((rank * 7 + i * 3) % 11) - 3;
    switch (t) {
      case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
      case DataType::kUint8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
      case DataType::kInt32: static_cast<int32_t*>(p)[i] = v; break;
      case DataType::kUint32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
      case DataType::kInt64: static_cast<int64_t*>(p)[i] = v; break;
      case DataType::kUint64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
      case DataType::kFloat16: static_cast<uint16_t*>(p)[i] = FloatToFp16(static_cast<float>(v)); break;
      case DataType::kBfloat16: static_cast<uint16_t*>(p)[i] = FloatToBf16(static_cast<float>(v)); break;
      case DataType::kFloat32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
      case DataType::kFloat64: static_cast<double*>(p)[i] = v; break;
    }
  }
}

class ReduceMathTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(ReduceMathTest, HostReferenceMatchesTheCpuLibrary) {
  auto [dt_i, op_i, n] = GetParam();
  const auto dt = static_cast<DataType>(dt_i);
  const auto op = static_cast<RedOp>(op_i);
  const size_t count = 1000, es = DataTypeSize(dt);
  std::vector<std::vector<char>> in(n, std::vector<char>(count * es));
  std::vector<const void*> ptrs;
  for (int r = 0; r < n; ++r) {
    Fill(dt, in[r].data(), count, r, op);
    ptrs.push_back(in[r].data());
  }
  std::vector<char> gpu_ref(count * es);
  ReduceNHost(gpu_ref.data(), ptrs.data(), n, count, dt, op, n);

  std::vector<char> cpu = in[0];
  exec::ReduceFn fn = exec::GetReduceFn(dt, op);
  ASSERT_NE(fn, nullptr);
  for (int r = 1; r < n; ++r) fn(cpu.data(), in[r].data(), count);
  if (op == RedOp::kAvg) exec::DivideInPlace(cpu.data(), count, dt, n);
  EXPECT_EQ(0, std::memcmp(cpu.data(), gpu_ref.data(), count * es))
      << DataTypeName(dt) << " " << RedOpName(op) << " over " << n << " inputs";
}

INSTANTIATE_TEST_SUITE_P(EveryTypeAndOp, ReduceMathTest,
                         ::testing::Combine(::testing::Range(0, kNumDataTypes),
                                            ::testing::Range(0, kNumRedOps),
                                            ::testing::Values(1, 2, 5, 9)));

TEST(ReduceMath, Float16AccumulatesInFloatAndRoundsOnce) {
  // 2048 + 1 + 1: float16 cannot hold 2049, so pairwise rounding loses both ones
  // (2048 + 1 -> 2048, twice); the kernel's float accumulation keeps them (2050).
  const uint16_t a = FloatToFp16(2048.0f), b = FloatToFp16(1.0f);
  const uint16_t* in[] = {&a, &b, &b};
  EXPECT_EQ(Fp16ToFloat(ReduceElement<DataType::kFloat16, RedOp::kSum>(in, 3, 0, 3)), 2050.0f);
}

TEST(ReduceMath, IntegerSumWrapsAndAvgDividesWide) {
  const int8_t a = 100, b = 100;
  const int8_t* in[] = {&a, &b};
  EXPECT_EQ((ReduceElement<DataType::kInt8, RedOp::kSum>(in, 2, 0, 2)), static_cast<int8_t>(-56));
  // avg of 200 ranks' int8: the divisor does not fit int8 but must still divide.
  const int8_t big = 100;
  std::vector<const int8_t*> many(200, &big);
  EXPECT_EQ((ReduceElement<DataType::kInt8, RedOp::kAvg>(many.data(), 1, 0, 200)), 0);
  EXPECT_EQ(Finish<RedOp::kAvg>(int8_t{-100}, 200), 0);
  EXPECT_EQ(Finish<RedOp::kAvg>(uint8_t{250}, 2), 125);
}

TEST(ReduceMath, MinMaxKeepTheFirstNanLikeTheCpu) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float one = 1.0f;
  const float* first_nan[] = {&nan, &one};
  const float* later_nan[] = {&one, &nan};
  EXPECT_TRUE(std::isnan(ReduceElement<DataType::kFloat32, RedOp::kMin>(first_nan, 2, 0, 2)));
  EXPECT_EQ((ReduceElement<DataType::kFloat32, RedOp::kMin>(later_nan, 2, 0, 2)), 1.0f);
}

}  // namespace
}  // namespace weft::gpu
