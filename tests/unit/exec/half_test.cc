#include "core/half.h"

#include <gtest/gtest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "half_reference.h"

namespace weft {
namespace {

using testing::Bits;
using testing::FromBits;

// Float bit patterns that exercise every rounding decision for a 16-bit target: all
// sign/exponent/top-mantissa combinations (the upper 16 or 19 bits), each with the
// dropped low bits exactly zero, just above zero, just below/at/above halfway, and
// all ones. For float16 the subnormal range drops more than 13 bits; its halfway
// points are covered because they are "upper bits + low zeros".
std::vector<uint32_t> RoundingProbes(int dropped_bits) {
  const uint32_t half = 1u << (dropped_bits - 1);
  const uint32_t lows[] = {0, 1, half - 1, half, half + 1, (1u << dropped_bits) - 1};
  std::vector<uint32_t> out;
  for (uint64_t hi = 0; hi < (1ull << (32 - dropped_bits)); ++hi)
    for (uint32_t lo : lows) out.push_back(static_cast<uint32_t>(hi << dropped_bits) | lo);
  std::mt19937 rng(42);
  for (int i = 0; i < 1000000; ++i) out.push_back(rng());
  return out;
}

// Same bits, with "any NaN equals any NaN of the same sign" (payloads are checked
// separately where they are specified).
bool SameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) &&
                                             std::signbit(a) == std::signbit(b);
  return Bits(a) == Bits(b);
}

TEST(HalfTest, Fp16ToFloatExhaustiveMatchesFloat16Type) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = static_cast<uint16_t>(h);
    const uint32_t want = Bits(testing::RefFp16ToFloat(x));
    ASSERT_EQ(Bits(Fp16ToFloatPortable(x)), want) << std::hex << "h=0x" << h;
    ASSERT_EQ(Bits(Fp16ToFloat(x)), want) << std::hex << "h=0x" << h;
  }
}

TEST(HalfTest, Fp16RoundTripsExhaustively) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = static_cast<uint16_t>(h);
    const bool is_nan = (x & 0x7c00) == 0x7c00 && (x & 0x3ff) != 0;
    // A NaN comes back quiet, with its sign and payload.
    const uint16_t want = is_nan ? static_cast<uint16_t>(x | 0x200) : x;
    ASSERT_EQ(FloatToFp16Portable(Fp16ToFloatPortable(x)), want) << std::hex << h;
    ASSERT_EQ(FloatToFp16(Fp16ToFloat(x)), want) << std::hex << h;
  }
}

TEST(HalfTest, FloatToFp16MatchesFloat16Type) {
  for (uint32_t bits : RoundingProbes(13)) {
    const float f = FromBits(bits);
    const uint16_t want = testing::RefFloatToFp16(f);
    ASSERT_EQ(FloatToFp16Portable(f), want) << std::hex << "float bits 0x" << bits;
    ASSERT_EQ(FloatToFp16(f), want) << std::hex << "float bits 0x" << bits;
  }
}

TEST(HalfTest, Fp16Boundaries) {
  EXPECT_EQ(FloatToFp16(65504.0f), 0x7bff);           // largest finite
  EXPECT_EQ(FloatToFp16(65519.996f), 0x7bff);         // just below halfway to 2^16
  EXPECT_EQ(FloatToFp16(65520.0f), 0x7c00);           // halfway, ties to even: inf
  EXPECT_EQ(FloatToFp16(-1e30f), 0xfc00);
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -25)), 0x0000);  // halfway to it: even = 0
  EXPECT_EQ(FloatToFp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToFp16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: stays even
  EXPECT_EQ(FloatToFp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: up to even
  EXPECT_EQ(Fp16ToFloat(0x3555), FromBits(0x3eaaa000));
}

#if defined(__x86_64__)
// The F16C instructions, when this CPU has them, agree with the portable code: the
// header uses them whenever the build targets F16C.
__attribute__((target("f16c"))) float HwFp16ToFloat(uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("f16c"))) uint16_t HwFloatToFp16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

TEST(HalfTest, PortableMatchesF16cInstructions) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = static_cast<uint16_t>(h);
    ASSERT_EQ(Bits(Fp16ToFloatPortable(x)), Bits(HwFp16ToFloat(x))) << std::hex << h;
  }
  for (uint32_t bits : RoundingProbes(13)) {
    const float f = FromBits(bits);
    ASSERT_EQ(FloatToFp16Portable(f), HwFloatToFp16(f)) << std::hex << bits;
  }
}

#endif  // __x86_64__

TEST(HalfTest, FloatToBf16MatchesReferenceRounding) {
  for (uint32_t bits : RoundingProbes(16)) {
    const float f = FromBits(bits);
    ASSERT_EQ(FloatToBf16(f), testing::RefFloatToBf16(f)) << std::hex << "float bits 0x"
                                                          << bits;
  }
}

TEST(HalfTest, Bf16RoundTripsExhaustively) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t x = static_cast<uint16_t>(h);
    ASSERT_TRUE(SameFloat(Bf16ToFloat(x), testing::RefBf16ToFloat(x)));
    const bool is_nan = (x & 0x7f80) == 0x7f80 && (x & 0x7f) != 0;
    ASSERT_EQ(FloatToBf16(Bf16ToFloat(x)), is_nan ? (x | 0x40) : x) << std::hex << h;
  }
}

TEST(HalfTest, Bf16Boundaries) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(FromBits(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(FloatToBf16(FromBits(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(FloatToBf16(FromBits(0x7f7fffff)), 0x7f80);  // FLT_MAX rounds to inf
  EXPECT_EQ(FloatToBf16(FromBits(0x7fffffff)), 0x7fff);  // NaN never becomes inf/0
  EXPECT_EQ(FloatToBf16(FromBits(0x7f800001)), 0x7fc0);  // signalling NaN: quiet
  EXPECT_EQ(FloatToBf16(FromBits(0xff800001)), 0xffc0);
}

}  // namespace
}  // namespace weft
