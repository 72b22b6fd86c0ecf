#include "check_values.h"

#include <algorithm>
#include <cmath>

#include "check_dtypes.h"

namespace check {
namespace {

// splitmix64: a well-mixed hash, so neighbouring ranks and indices get unrelated values.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double RawValue(const DTypeInfo& d, std::optional<weftRedOp_t> op, int rank, size_t index,
                uint64_t salt) {
  uint64_t h = Mix(Mix(salt * 1000003u + static_cast<uint64_t>(rank)) ^ index);
  if (!op) {
    // Movement: as many distinct values as the type allows (uint8: 0..200).
    if (!d.is_float) return d.is_signed ? static_cast<double>(h % 201) - 100.0
                                        : static_cast<double>(h % 201);
    return (static_cast<double>(h % 1999) - 999.0) * 0.5;
  }
  switch (*op) {
    case weftSum:
    case weftAvg:
      // |x| <= 3 keeps int8 sums exact up to 42 ranks; 0..3 keeps uint8 exact up to 85.
      if (!d.is_float) return d.is_signed ? static_cast<double>(h % 7) - 3.0
                                          : static_cast<double>(h % 4);
      // Not exactly representable in float16/bfloat16: exercises rounding.
      return (static_cast<double>(h % 23) - 11.0) * 0.1 + 0.03;
    case weftProd: {
      // At most 6 factors of 2 over all ranks (|product| <= 64 fits int8); only ranks
      // below 6 may contribute a 2, the others 1 or -1.
      int pick = static_cast<int>(h % 6);
      if (!d.is_float) {
        if (pick == 0 && rank < 6) return 2.0;
        if (pick == 1 && d.is_signed) return -1.0;
        return 1.0;
      }
      static const double kFloatFactors[] = {2.0, -1.0, 0.5, 1.25, 1.0, 1.0};
      if (rank >= 6 && (pick == 0 || pick == 3)) return 1.0;  // keep |product| modest
      return kFloatFactors[pick];
    }
    case weftMin:
    case weftMax:
      if (!d.is_float) return d.is_signed ? static_cast<double>(h % 101) - 50.0
                                          : static_cast<double>(h % 201);
      return (static_cast<double>(h % 101) - 50.0) * 0.25;
    default:
      return 0;
  }
}

}  // namespace

double InputValue(weftDataType_t dtype, std::optional<weftRedOp_t> op, int rank, size_t index,
                  uint64_t salt) {
  return RoundTo(dtype, RawValue(Info(dtype), op, rank, index, salt));
}

Expected ReducedValue(weftDataType_t dtype, weftRedOp_t op, int nranks, size_t index,
                      uint64_t salt) {
  const DTypeInfo& d = Info(dtype);
  double sum = 0, abs_sum = 0, prod = 1;
  double lo = INFINITY, hi = -INFINITY;
  for (int r = 0; r < nranks; ++r) {
    double x = InputValue(dtype, op, r, index, salt);
    sum += x;
    abs_sum += std::fabs(x);
    prod *= x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  // A sum of n floats in any order is within (n-1)*u*sum|x| of the exact sum; one more
  // u for rounding the result to the type, one for the division of avg.
  double n = nranks;
  switch (op) {
    case weftSum: return {sum, (n + 1) * d.eps * abs_sum};
    case weftProd: return {prod, (n + 1) * d.eps * std::fabs(prod)};
    case weftMin: return {lo, 0};
    case weftMax: return {hi, 0};
    case weftAvg:
      if (!d.is_float) return {std::trunc(sum / n), 0};  // integer division truncates
      return {sum / n, (n + 2) * d.eps * abs_sum / n};
    default: return {NAN, 0};
  }
}

bool Matches(const Expected& e, double got) {
  if (std::isnan(got)) return false;
  if (e.tolerance == 0) return got == e.value;
  return std::fabs(got - e.value) <= e.tolerance;
}

}  // namespace check
