// The one size parser of weft-bench, weft-sim and the peer benchmarks.
#include "common/byte_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace weft::tools {
namespace {

TEST(ByteSize, PlainCountsAndSuffixesInEitherCase) {
  EXPECT_EQ(ParseByteSize("0"), 0u);
  EXPECT_EQ(ParseByteSize("8"), 8u);
  EXPECT_EQ(ParseByteSize("1536"), 1536u);
  EXPECT_EQ(ParseByteSize("007"), 7u);
  EXPECT_EQ(ParseByteSize("1K"), 1024u);
  EXPECT_EQ(ParseByteSize("3k"), 3u * 1024);
  EXPECT_EQ(ParseByteSize("64M"), 64u << 20);
  EXPECT_EQ(ParseByteSize("5m"), 5u << 20);
  EXPECT_EQ(ParseByteSize("1G"), size_t{1} << 30);
  EXPECT_EQ(ParseByteSize("16g"), size_t{16} << 30);
  EXPECT_EQ(ParseByteSize("0G"), 0u);
}

TEST(ByteSize, LargestValuesAreExact) {
  EXPECT_EQ(ParseByteSize(std::to_string(SIZE_MAX)), SIZE_MAX);
  // 2^64 - 2^30: the largest whole number of GiB.
  EXPECT_EQ(ParseByteSize(std::to_string(SIZE_MAX >> 30) + "G"), (SIZE_MAX >> 30) << 30);
  EXPECT_EQ(ParseByteSize(std::to_string(SIZE_MAX >> 10) + "K"), (SIZE_MAX >> 10) << 10);
}

TEST(ByteSize, OverflowIsRefusedNotWrapped) {
  EXPECT_EQ(ParseByteSize("18446744073709551616"), std::nullopt);  // 2^64
  EXPECT_EQ(ParseByteSize("99999999999999999999999"), std::nullopt);
  // 2^64 + 1 GiB: wrapped by a plain multiply, this would read as 1G.
  EXPECT_EQ(ParseByteSize("17179869185G"), std::nullopt);
  EXPECT_EQ(ParseByteSize("17179869184G"), std::nullopt);  // exactly 2^64
  EXPECT_EQ(ParseByteSize(std::to_string((SIZE_MAX >> 20) + 1) + "M"), std::nullopt);
  EXPECT_EQ(ParseByteSize(std::to_string((SIZE_MAX >> 10) + 1) + "K"), std::nullopt);
}

TEST(ByteSize, EmptyGarbageAndSignsAreRefused) {
  for (const char* bad : {"", "K", "g", "abc", "1KB", "1KiB", "1T", "1.5M", "1e6", " 1", "1 ",
                          "-1", "-1K", "+1", "0x10", "1,024", "K1", "1MK"}) {
    EXPECT_EQ(ParseByteSize(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ByteSize, FormatReadsBack) {
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(1536), "1536");
  EXPECT_EQ(FormatByteSize(1024), "1K");
  EXPECT_EQ(FormatByteSize(3u << 20), "3M");
  EXPECT_EQ(FormatByteSize(size_t{1} << 30), "1G");
  EXPECT_EQ(FormatByteSize((size_t{1} << 30) + 1024), "1048577K");
  for (size_t b : {size_t{0}, size_t{7}, size_t{4096}, size_t{96} << 20, SIZE_MAX,
                   (SIZE_MAX >> 30) << 30}) {
    EXPECT_EQ(ParseByteSize(FormatByteSize(b)), b) << b;
  }
}

}  // namespace
}  // namespace weft::tools
