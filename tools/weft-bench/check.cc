#include "check.h"

#include <cmath>

#include "dtypes.h"

namespace weftbench {
namespace {

// The value rank `rank` puts at index j of its send buffer.
long double InputValue(const CheckSpec& s, int rank, size_t j) {
  const bool is_signed = Info(s.dtype).kind != Kind::kUnsigned;
  const size_t r = static_cast<size_t>(rank);
  if (!s.coll->reduces) {
    const size_t v = (r * 131 % 97 + j % 97 * 7) % 97;
    return is_signed ? static_cast<long double>(v) - 48 : v;
  }
  switch (s.redop) {
    case weftSum:
    case weftAvg: {
      const size_t v = (r + j) % 4;
      return is_signed ? static_cast<long double>(v) - 1 : v;
    }
    case weftProd:
      if (is_signed) return (r + j) % 3 == 0 ? -1 : 1;
      return (r + j) % 8 == 0 ? 2 : 1;
    case weftMin:
    case weftMax: {
      const size_t v = (r * 5 + j * 3) % 11;
      return is_signed ? static_cast<long double>(v) - 5 : v;
    }
    default: return 0;
  }
}

// Two's-complement wrap of an exact integer to the type's width.
long double WrapInteger(long double v, const DtypeInfo& info) {
  const long double mod = std::ldexp(1.0L, info.precision);
  long double w = std::fmod(v, mod);
  if (w < 0) w += mod;
  if (info.kind == Kind::kSigned && w >= mod / 2) w -= mod;
  return w;
}

struct Expectation {
  bool check;
  long double value;
  long double tolerance;
};

Expectation Expected(const CheckSpec& s, size_t j) {
  const Source src = s.coll->source(s.rank, s.nranks, s.root, s.count, j);
  if (src.kind == Source::kUnchecked) return {false, 0, 0};
  if (src.kind == Source::kOne) return {true, InputValue(s, src.rank, src.index), 0};

  const DtypeInfo& info = Info(s.dtype);
  long double acc = InputValue(s, 0, src.index);
  long double sum_abs = std::fabs(acc);
  for (int q = 1; q < s.nranks; ++q) {
    const long double v = InputValue(s, q, src.index);
    sum_abs += std::fabs(v);
    switch (s.redop) {
      case weftSum: case weftAvg: acc += v; break;
      case weftProd: acc *= v; break;
      case weftMin: acc = v < acc ? v : acc; break;
      case weftMax: acc = v > acc ? v : acc; break;
      default: break;
    }
  }
  if (info.kind != Kind::kFloat) {
    acc = WrapInteger(acc, info);
    if (s.redop == weftAvg) acc = std::trunc(acc / s.nranks);  // C division
    return {true, acc, 0};
  }
  // Sums: the library may round after every addition, in any order: allow one unit
  // roundoff of the running magnitude per term. Avg adds one rounding of the result.
  const long double u = std::ldexp(1.0L, -info.precision);
  long double tol = 0;
  if (s.redop == weftSum || s.redop == weftAvg) tol = sum_abs * s.nranks * u;
  if (s.redop == weftAvg) {
    acc /= s.nranks;
    tol = tol / s.nranks + std::fabs(acc) * u;
  }
  return {true, acc, tol};
}

}  // namespace

void FillInputs(const CheckSpec& s, void* send) {
  const size_t n = s.coll->send_elems(s.count, s.nranks);
  for (size_t j = 0; j < n; ++j) WriteValue(s.dtype, send, j, InputValue(s, s.rank, j));
}

void Poison(const CheckSpec& s, void* recv) {
  // 111 is outside every input range and exact in every type.
  const size_t n = s.coll->recv_elems(s.count, s.nranks);
  for (size_t j = 0; j < n; ++j) WriteValue(s.dtype, recv, j, 111);
}

int64_t CountWrong(const CheckSpec& s, const void* recv) {
  const size_t n = s.coll->recv_elems(s.count, s.nranks);
  int64_t wrong = 0;
  for (size_t j = 0; j < n; ++j) {
    const Expectation e = Expected(s, j);
    if (!e.check) continue;
    const long double got = ReadValue(s.dtype, recv, j);
    // Written so that a NaN counts as wrong.
    if (!(std::fabs(got - e.value) <= e.tolerance)) ++wrong;
  }
  return wrong;
}

}  // namespace weftbench
