// How a reduction of n inputs is folded into device launches of at most
// kMaxReduceInputs inputs each: the first launch reduces the first inputs into `out`,
// every later one reduces the running result in `out` with the next inputs (avg divides
// only in the last). Shared by the CUDA launcher and the CPU fake, so the fake computes
// exactly what the device does, batch by batch and rounding by rounding.
//
// `out` may be exactly one of the inputs (an in-place reduction). Read in a later batch,
// that input would already hold the first batch's result, so it is moved to the front
// of the first batch instead: every rank that reduces in place at any position gets the
// right sum (the order of the terms then differs from rank order).
#pragma once

#include <vector>

#include "core/types.h"

namespace weft::gpu {

// Inputs one kernel launch reads.
inline constexpr int kMaxReduceInputs = 8;

struct ReduceBatch {
  const void* in[kMaxReduceInputs] = {};
  int n = 0;
  RedOp op = RedOp::kSum;  // avg's batches before the last: sum
  int divisor = 1;         // the last batch's only
};

inline std::vector<ReduceBatch> PlanReduceBatches(const void* out, const void* const* in,
                                                  int n, RedOp op, int divisor) {
  std::vector<const void*> order(in, in + n);
  for (int r = kMaxReduceInputs; r < n; ++r) {
    if (order[r] == out) {
      order.erase(order.begin() + r);
      order.insert(order.begin(), out);
      break;
    }
  }
  std::vector<ReduceBatch> batches;
  int done = 0;
  while (done < n) {
    ReduceBatch b;
    if (done > 0) b.in[b.n++] = out;
    while (b.n < kMaxReduceInputs && done < n) b.in[b.n++] = order[done++];
    const bool last = done == n;
    b.op = (op == RedOp::kAvg && !last) ? RedOp::kSum : op;
    b.divisor = last ? divisor : 1;
    batches.push_back(b);
  }
  return batches;
}

}  // namespace weft::gpu
