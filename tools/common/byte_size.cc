#include "byte_size.h"

#include <cstdint>

namespace weft::tools {

std::optional<size_t> ParseByteSize(std::string_view text) {
  int shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: break;
    }
  }
  if (shift != 0) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const size_t digit = static_cast<size_t>(c - '0');
    if (value > (SIZE_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value > (SIZE_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::string FormatByteSize(size_t bytes) {
  static constexpr struct { int shift; char suffix; } kUnits[] = {{30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (const auto& u : kUnits) {
    const size_t unit = size_t{1} << u.shift;
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes >> u.shift) + u.suffix;
  }
  return std::to_string(bytes);
}

}  // namespace weft::tools
