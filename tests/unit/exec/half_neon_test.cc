// The NEON block conversions of reduce_neon.h against core/half.h's portable ones, bit
// for bit: every float16/bfloat16 pattern widened, and every rounding decision of the
// narrowing (the probes of half_test.cc), NaN payloads included. aarch64 builds only;
// elsewhere this file is empty.
#if defined(__aarch64__)
#include "exec/reduce_neon.h"

#include <gtest/gtest.h>
#include <sys/auxv.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/half.h"
#include "half_reference.h"

namespace weft {
namespace {

using testing::Bits;
using testing::FromBits;

std::vector<uint16_t> EveryHalfPattern() {
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < all.size(); ++h) all[h] = static_cast<uint16_t>(h);
  return all;
}

// Float inputs for narrowing: each sign/exponent/kept-mantissa combination with the
// dropped bits zero, one, just below/at/above half and all ones; then random floats.
std::vector<float> NarrowingProbes(int dropped_bits) {
  const uint32_t half = 1u << (dropped_bits - 1);
  const uint32_t lows[] = {0, 1, half - 1, half, half + 1, (1u << dropped_bits) - 1};
  std::vector<float> out;
  for (uint64_t hi = 0; hi < (1ull << (32 - dropped_bits)); ++hi)
    for (uint32_t lo : lows) out.push_back(FromBits(static_cast<uint32_t>(hi << dropped_bits) | lo));
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) out.push_back(FromBits(rng()));
  return out;
}

template <typename Widen>
void ExpectWidenMatches(Widen widen, float (*portable)(uint16_t)) {
  const std::vector<uint16_t> in = EveryHalfPattern();
  // An odd count leaves a scalar tail after the 8-wide body.
  std::vector<float> out(in.size() - 1);
  widen(in.data(), out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(Bits(out[i]), Bits(portable(in[i]))) << std::hex << "pattern 0x" << in[i];
}

template <typename Narrow>
void ExpectNarrowMatches(Narrow narrow, uint16_t (*portable)(float), int dropped_bits) {
  const std::vector<float> in = NarrowingProbes(dropped_bits);
  std::vector<uint16_t> out(in.size() - 3);
  narrow(in.data(), out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], portable(in[i])) << std::hex << "float bits 0x" << Bits(in[i]);
}

TEST(HalfNeonTest, WidenFp16MatchesPortable) {
  ExpectWidenMatches(exec::neon::WidenFp16, Fp16ToFloatPortable);
}

TEST(HalfNeonTest, NarrowFp16MatchesPortable) {
  ExpectNarrowMatches(exec::neon::NarrowFp16, FloatToFp16Portable, 13);
}

TEST(HalfNeonTest, NarrowBf16BfcvtMatchesPortable) {
  if ((getauxval(AT_HWCAP2) & HWCAP2_BF16) == 0) GTEST_SKIP() << "no FEAT_BF16 on this CPU";
  ExpectNarrowMatches(exec::neon::NarrowBf16Bfcvt, FloatToBf16, 16);
}

}  // namespace
}  // namespace weft
#endif  // __aarch64__
