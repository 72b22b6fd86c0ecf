// Byte sizes as nccl-tests writes them on its command line: 8, 1024, 1K, 64M, 1G (a decimal
// count, optionally times a power of 1024; the suffix in either case). One parser for every
// tool that takes sizes (weft-bench, weft-sim, the peer benchmarks in bench/peers), so the
// same text means the same size everywhere and an overflow is refused everywhere.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft::tools {

// What ParseByteSize accepts, for error messages.
inline constexpr const char* kByteSizeSyntax =
    "a byte count of at most 2^64-1, optionally with K, M or G (powers of 1024), e.g. 8, 1K, "
    "64M, 1G";

// The size `text` stands for; nullopt for anything else: empty, a sign, spaces, another
// suffix, a fraction, or a value above SIZE_MAX (never wrapped).
std::optional<size_t> ParseByteSize(std::string_view text);

// The shortest form ParseByteSize reads back: 1024 -> "1K", 1536 -> "1536", 1 << 30 -> "1G".
std::string FormatByteSize(size_t bytes);

}  // namespace weft::tools
