#include "transport/stripes.h"

#include <algorithm>

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

}  // namespace weft::transport
