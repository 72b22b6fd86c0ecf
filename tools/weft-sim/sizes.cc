#include "sizes.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace weft::sim::cli {

std::optional<size_t> ParseSize(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K': mult = size_t{1} << 10; break;
    case 'M': mult = size_t{1} << 20; break;
    case 'G': mult = size_t{1} << 30; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v * mult;
}

std::string FormatSize(size_t b) {
  if (b >= (size_t{1} << 30) && b % (size_t{1} << 30) == 0) return fmt::format("{}G", b >> 30);
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return fmt::format("{}M", b >> 20);
  if (b >= (size_t{1} << 10) && b % (size_t{1} << 10) == 0) return fmt::format("{}K", b >> 10);
  return fmt::format("{}", b);
}

}  // namespace weft::sim::cli
