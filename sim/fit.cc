// Closed-form least squares for one parameter (see fit.h).
#include "sim/fit.h"

#include <algorithm>

namespace weft::sim {

double FitAlpha(const std::vector<AlphaSample>& samples) {
  // d/da sum(((k a + b - m)/m)^2) = 0  =>  a = sum(k (m - b) / m^2) / sum(k^2 / m^2).
  double num = 0, den = 0;
  for (const AlphaSample& s : samples) {
    if (!(s.measured > 0)) continue;
    const double w = 1.0 / (s.measured * s.measured);
    num += s.k * (s.measured - s.b) * w;
    den += s.k * s.k * w;
  }
  if (!(den > 0)) return 0;
  // A negative alpha would mean the model's bandwidth terms alone overshoot; alpha is a
  // latency and cannot be negative, so clamp and let the error table show the overshoot.
  return std::max(0.0, num / den);
}

}  // namespace weft::sim
