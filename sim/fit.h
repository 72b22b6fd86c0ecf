// Fitting the inter-node alpha to measured times.
//
// For a fixed schedule on an uncontended path the predicted time is affine in alpha:
// t(alpha) = k * alpha + b, with k the number of message latencies on the critical path
// (2(p-1) for a ring allreduce, lg p for recursive doubling) and b everything else.
// The caller gets k and b from two simulations (alpha = 0 and alpha = a1), and the fit
// minimises the *relative* squared error sum(((k a + b - m) / m)^2), so that 1 KiB and
// 64 KiB weigh the same (absolute errors would let the largest size decide alone).
#pragma once

#include <vector>

namespace weft::sim {

struct AlphaSample {
  double k = 0;         // d t / d alpha (message latencies on the critical path)
  double b = 0;         // t at alpha = 0, seconds
  double measured = 0;  // seconds, > 0
};

// The alpha >= 0 minimising the relative squared error; 0 when no sample depends on it.
double FitAlpha(const std::vector<AlphaSample>& samples);

}  // namespace weft::sim
