// CPU reduction kernels: one loop template over (element, op) and one table of its
// instantiations, indexed by the DataType and RedOp enums.
//
// Performance notes (this file is built with -O3, see the top-level CMakeLists.txt):
// - Native types: the plain loop `d[i] = op(d[i], s[i])` auto-vectorises (GCC checks
//   at run time that d and s do not overlap, and falls back to scalar if they do).
// - float16/bfloat16: converting element by element inside the op loop would not
//   vectorise, so a block is widened into float arrays on the stack, reduced there,
//   and narrowed back; each of those three loops vectorises on its own (the portable
//   conversions in core/half.h are branch-free for this reason).
// - Integer arithmetic happens in the unsigned type of at least `unsigned int` width,
//   where overflow wraps by definition; the conversion back to a signed type is
//   modular in C++20. This gives two's-complement wrap-around without UB.
// - Float min/max are `s < d ? s : d` (resp. `>`), which is exactly what minps/maxps
//   compute, so they vectorise without -ffast-math. NaN is not propagated
//   symmetrically: a NaN already in dst stays, a NaN in src is ignored
//   (min(x, NaN) = x, min(NaN, x) = NaN), as with x86 minps. Reductions of data
//   with NaNs should use sum/prod, which propagate them.
#include "exec/reduce.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/half.h"

namespace weft::exec {
namespace {

// --- Elements: how a stored value is widened for arithmetic and narrowed back ---------

template <typename T, DataType kDt>
struct Native {
  static constexpr DataType kType = kDt;
  using Storage = T;
  using Compute = T;
  static T Load(T x) { return x; }
  static T Store(T x) { return x; }
};

template <uint16_t (*kNarrow)(float), float (*kWiden)(uint16_t), DataType kDt>
struct Half {
  static constexpr DataType kType = kDt;
  using Storage = uint16_t;
  using Compute = float;
  static float Load(uint16_t x) { return kWiden(x); }
  static uint16_t Store(float x) { return kNarrow(x); }
};

// In DataType order; the table below static_asserts that it matches.
using Elements = std::tuple<
    Native<int8_t, DataType::kInt8>, Native<uint8_t, DataType::kUint8>,
    Native<int32_t, DataType::kInt32>, Native<uint32_t, DataType::kUint32>,
    Native<int64_t, DataType::kInt64>, Native<uint64_t, DataType::kUint64>,
    Half<FloatToFp16, Fp16ToFloat, DataType::kFloat16>,
    Half<FloatToBf16, Bf16ToFloat, DataType::kBfloat16>,
    Native<float, DataType::kFloat32>, Native<double, DataType::kFloat64>>;
static_assert(std::tuple_size_v<Elements> == kNumDataTypes);

// --- Ops -------------------------------------------------------------------------------

// The unsigned type integer arithmetic is done in: at least `unsigned int`, so that
// small types are not promoted to a signed int (which could overflow, e.g. 65535^2).
template <typename T>
using WrapType = decltype(std::make_unsigned_t<T>{} + 0u);

struct Sum {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct Prod {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
};

// Argument order matters for NaN (see the file comment): a is dst, b is src.
struct Min {
  template <typename T>
  static T Apply(T a, T b) { return b < a ? b : a; }
};

struct Max {
  template <typename T>
  static T Apply(T a, T b) { return b > a ? b : a; }
};

// --- The kernel ---------------------------------------------------------------------------

// Widened block for float16/bfloat16: 2 x 1 KiB of floats stays in L1 and is long
// enough that the per-block overhead vanishes.
constexpr size_t kBlock = 256;

template <typename E, typename Op>
void ReduceKernel(void* dst, const void* src, size_t count) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* d = static_cast<S*>(dst);
  const S* s = static_cast<const S*>(src);
  if constexpr (std::is_same_v<S, C>) {
    for (size_t i = 0; i < count; ++i) d[i] = Op::Apply(d[i], s[i]);
  } else {
    C a[kBlock];
    C b[kBlock];
    for (size_t base = 0; base < count; base += kBlock) {
      const size_t n = std::min(kBlock, count - base);
      S* db = d + base;
      const S* sb = s + base;
      for (size_t i = 0; i < n; ++i) a[i] = E::Load(db[i]);
      for (size_t i = 0; i < n; ++i) b[i] = E::Load(sb[i]);
      for (size_t i = 0; i < n; ++i) a[i] = Op::Apply(a[i], b[i]);
      for (size_t i = 0; i < n; ++i) db[i] = E::Store(a[i]);
    }
  }
}

// Integers truncate toward zero (C++ `/`); floats divide (correctly rounded, unlike a
// multiplication by 1/divisor); float16/bfloat16 divide in float and round once.
template <typename E>
void DivideKernel(void* buf, size_t count, int divisor) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* p = static_cast<S*>(buf);
  if constexpr (std::is_same_v<S, C>) {
    // For unsigned types the divisor must be unsigned too (a positive int converts
    // exactly); for signed types it stays signed so truncation is toward zero.
    const C div = static_cast<C>(divisor);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<C>(p[i] / div);
  } else {
    const C div = static_cast<C>(divisor);
    C a[kBlock];
    for (size_t base = 0; base < count; base += kBlock) {
      const size_t n = std::min(kBlock, count - base);
      S* pb = p + base;
      for (size_t i = 0; i < n; ++i) a[i] = E::Load(pb[i]) / div;
      for (size_t i = 0; i < n; ++i) pb[i] = E::Store(a[i]);
    }
  }
}

// --- The tables ---------------------------------------------------------------------------

using DivideFn = void (*)(void*, size_t, int);

template <typename E>
constexpr std::array<ReduceFn, kNumRedOps> kOpRow = {
    // kSum, kProd, kMin, kMax, kAvg (a sum; the caller divides once at the end)
    ReduceKernel<E, Sum>, ReduceKernel<E, Prod>, ReduceKernel<E, Min>,
    ReduceKernel<E, Max>, ReduceKernel<E, Sum>};

template <size_t... I>
constexpr auto MakeTables(std::index_sequence<I...>) {
  static_assert(((std::tuple_element_t<I, Elements>::kType == static_cast<DataType>(I)) && ...),
                "Elements must list the types in DataType order");
  struct Tables {
    std::array<std::array<ReduceFn, kNumRedOps>, kNumDataTypes> reduce;
    std::array<DivideFn, kNumDataTypes> divide;
  };
  return Tables{{kOpRow<std::tuple_element_t<I, Elements>>...},
                {DivideKernel<std::tuple_element_t<I, Elements>>...}};
}

constexpr auto kTables = MakeTables(std::make_index_sequence<kNumDataTypes>{});

bool Valid(DataType dtype) {
  return static_cast<unsigned>(dtype) < static_cast<unsigned>(kNumDataTypes);
}

}  // namespace

ReduceFn GetReduceFn(DataType dtype, RedOp op) {
  if (!Valid(dtype) || static_cast<unsigned>(op) >= static_cast<unsigned>(kNumRedOps))
    return nullptr;
  return kTables.reduce[static_cast<int>(dtype)][static_cast<int>(op)];
}

void DivideInPlace(void* buf, size_t count, DataType dtype, int divisor) {
  // divisor is a rank count; anything below 1 is a caller bug, and doing nothing is
  // safer than dividing by zero or overflowing INT_MIN / -1.
  if (!Valid(dtype) || divisor <= 1) return;
  kTables.divide[static_cast<int>(dtype)](buf, count, divisor);
}

}  // namespace weft::exec
