#include "check_values.h"

#include <algorithm>
#include <cmath>

#include "check_dtypes.h"

namespace check {
namespace {

// How many distinct inputs a (dtype, op) has: the hash picks one of this many buckets.
uint64_t Modulus(const DTypeInfo& d, std::optional<weftRedOp_t> op) {
  if (!op) return d.is_float ? 1999 : 201;
  switch (*op) {
    case weftSum:
    case weftAvg:
      return d.is_float ? 23 : (d.is_signed ? 7 : 4);
    case weftProd:
      return 6;
    case weftMin:
    case weftMax:
      return d.is_float ? 101 : (d.is_signed ? 101 : 201);
    default:
      return 1;
  }
}

// The unrounded input for hash bucket `b` (< Modulus) of a rank in table `high` (rank 6
// and above).
double RawValue(const DTypeInfo& d, std::optional<weftRedOp_t> op, bool high, uint64_t b) {
  if (!op) {
    // Movement: as many distinct values as the type allows (uint8: 0..200).
    if (!d.is_float) return d.is_signed ? static_cast<double>(b) - 100.0 : static_cast<double>(b);
    return (static_cast<double>(b) - 999.0) * 0.5;
  }
  switch (*op) {
    case weftSum:
    case weftAvg:
      // |x| <= 3 keeps int8 sums exact up to 42 ranks; 0..3 keeps uint8 exact up to 85.
      if (!d.is_float) return d.is_signed ? static_cast<double>(b) - 3.0 : static_cast<double>(b);
      // Not exactly representable in float16/bfloat16: exercises rounding.
      return (static_cast<double>(b) - 11.0) * 0.1 + 0.03;
    case weftProd: {
      // At most 6 factors of 2 over all ranks (|product| <= 64 fits int8); only ranks
      // below 6 may contribute a 2, the others 1 or -1.
      if (!d.is_float) {
        if (b == 0 && !high) return 2.0;
        if (b == 1 && d.is_signed) return -1.0;
        return 1.0;
      }
      static const double kFloatFactors[] = {2.0, -1.0, 0.5, 1.25, 1.0, 1.0};
      if (high && (b == 0 || b == 3)) return 1.0;  // keep |product| modest
      return kFloatFactors[b];
    }
    case weftMin:
    case weftMax:
      if (!d.is_float) return d.is_signed ? static_cast<double>(b) - 50.0 : static_cast<double>(b);
      return (static_cast<double>(b) - 50.0) * 0.25;
    default:
      return 0;
  }
}

}  // namespace

CaseValues::CaseValues(weftDataType_t dtype, std::optional<weftRedOp_t> op, int nranks,
                       uint64_t salt)
    : op_(op), nranks_(nranks) {
  const DTypeInfo& d = Info(dtype);
  eps_ = d.eps;
  is_float_ = d.is_float;
  modulus_ = Modulus(d, op);
  rank_seeds_.resize(static_cast<size_t>(std::max(nranks, 0)));
  for (int r = 0; r < nranks; ++r) rank_seeds_[r] = Mix(salt * 1000003u + static_cast<uint64_t>(r));
  for (int high = 0; high < 2; ++high) {
    auto& t = table_[high];
    auto& bits = bits_[high];
    t.resize(modulus_);
    bits.assign(modulus_, 0);
    for (uint64_t b = 0; b < modulus_; ++b) {
      StoreElem(dtype, &bits[b], 0, RawValue(d, op, high != 0, b));  // little-endian low bytes
      t[b] = LoadElem(dtype, &bits[b], 0);
    }
  }
}

Expected CaseValues::Reduced(size_t index) const {
  // One loop per op: this runs for every element of every reduction case, on every rank.
  const double n = nranks_;
  const weftRedOp_t op = op_.value_or(weftSum);
  if (nranks_ < 1) return {NAN, 0};
  switch (op) {
    case weftMin:
    case weftMax: {
      const bool min = op == weftMin;
      double best = Input(0, index);
      for (int r = 1; r < nranks_; ++r) {
        const double x = Input(r, index);
        best = min ? std::min(best, x) : std::max(best, x);
      }
      return {best, 0};
    }
    case weftProd: {
      double prod = 1;
      for (int r = 0; r < nranks_; ++r) prod *= Input(r, index);
      return {prod, (n + 1) * eps_ * std::fabs(prod)};
    }
    case weftSum:
    case weftAvg: {
      double sum = 0, abs_sum = 0;
      for (int r = 0; r < nranks_; ++r) {
        const double x = Input(r, index);
        sum += x;
        abs_sum += std::fabs(x);
      }
      // A sum of n floats in any order is within (n-1)*u*sum|x| of the exact sum; one
      // more u for rounding the result to the type, one for the division of avg.
      if (op == weftSum) return {sum, (n + 1) * eps_ * abs_sum};
      if (!is_float_) return {std::trunc(sum / n), 0};  // integer division truncates
      return {sum / n, (n + 2) * eps_ * abs_sum / n};
    }
    default:
      return {NAN, 0};
  }
}

}  // namespace check
