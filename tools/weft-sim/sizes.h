// Byte sizes as nccl-tests writes them: 1024, 1K, 64M, 1G (powers of 1024).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft::sim::cli {

std::optional<size_t> ParseSize(std::string_view s);
// 1024 -> "1K", 1536 -> "1536", 1 << 30 -> "1G".
std::string FormatSize(size_t bytes);

}  // namespace weft::sim::cli
