#include "transport/stripes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace weft::transport {

int PlanStripes(uint64_t bytes, int rails, uint64_t stripe_min, Stripe* out) {
  if (rails <= 1 || bytes < stripe_min) {
    out[0] = Stripe{0, bytes};
    return 1;
  }
  uint64_t r = static_cast<uint64_t>(rails);
  uint64_t each = (bytes + r - 1) / r;
  each = (each + kStripeAlign - 1) / kStripeAlign * kStripeAlign;
  int n = 0;
  for (uint64_t off = 0; off < bytes && n < rails; off += each)
    out[n++] = Stripe{off, std::min(each, bytes - off)};
  if (n == 0) out[n++] = Stripe{0, 0};
  return n;
}

Result<int> ParseRailCount(std::string_view variable, std::string_view value) {
  if (value.empty() || value == "auto") return 0;
  int n = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || p != value.data() + value.size() || n < 1 || n > kMaxRails)
    return InvalidArgument(
        fmt::format("{} must be 'auto' or 1..{}, got '{}'", variable, kMaxRails, value));
  return n;
}

}  // namespace weft::transport
