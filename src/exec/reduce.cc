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

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/half.h"
#include "exec/reduce_internal.h"
#if defined(__aarch64__)
#include "exec/reduce_neon.h"
#endif

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

// Instruction sets a kernel is compiled for. Generic is the build's baseline (SSE2 on
// x86-64, Advanced SIMD on aarch64, both auto-vectorised); X86V3 (AVX2 + F16C + FMA,
// i.e. x86-64-v3) doubles the vector width and converts float16 with one instruction
// per 8 elements. ArmNeon is written with NEON intrinsics (reduce_neon.h) and converts
// float16 with FCVTL/FCVTN; ArmNeonBf16 adds BFCVTN for bfloat16 (FEAT_BF16). The choice
// is made once per process, from the CPU, in GetReduceFn.
struct IsaGeneric {
  static constexpr bool kF16c = false;
  static constexpr bool kNeon = false;
  static constexpr bool kBf16 = false;
};
struct IsaX86V3 {
  static constexpr bool kF16c = true;
  static constexpr bool kNeon = false;
  static constexpr bool kBf16 = false;
};
struct IsaArmNeon {
  static constexpr bool kF16c = false;
  static constexpr bool kNeon = true;
  static constexpr bool kBf16 = false;
};
struct IsaArmNeonBf16 {
  static constexpr bool kF16c = false;
  static constexpr bool kNeon = true;
  static constexpr bool kBf16 = true;
};

#if defined(__aarch64__)
#define WEFT_HAVE_NEON 1
#else
#define WEFT_HAVE_NEON 0
#endif

#if defined(__x86_64__)
#define WEFT_HAVE_X86V3 1
#define WEFT_TARGET_X86V3 [[gnu::target("avx2,f16c,fma")]]

// F16C block conversions (8 at a time, then the scalar instruction for the tail).
// Same bits as the portable code (tests/unit/exec/half_test.cc).
WEFT_TARGET_X86V3 inline void WidenFp16F16c(const uint16_t* s, float* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}

WEFT_TARGET_X86V3 inline void NarrowFp16F16c(const float* s, uint16_t* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  for (; i < n; ++i) d[i] = static_cast<uint16_t>(_cvtss_sh(s[i], _MM_FROUND_TO_NEAREST_INT));
}
#else
#define WEFT_HAVE_X86V3 0
#endif

template <uint16_t (*kNarrow)(float), float (*kWiden)(uint16_t), DataType kDt>
struct Half {
  static constexpr DataType kType = kDt;
  using Storage = uint16_t;
  using Compute = float;
  static float Load(uint16_t x) { return kWiden(x); }
  static uint16_t Store(float x) { return kNarrow(x); }

  // Whole-block conversions: plain loops (which vectorise, core/half.h is branch-free)
  // unless the instruction set converts float16 natively.
  template <typename Isa>
  [[gnu::always_inline]] static void Widen(const uint16_t* s, float* d, size_t n) {
#if WEFT_HAVE_X86V3
    if constexpr (Isa::kF16c && kDt == DataType::kFloat16) return WidenFp16F16c(s, d, n);
#endif
#if WEFT_HAVE_NEON
    // bfloat16 widening is a shift: GCC vectorises the portable loop with NEON in fewer
    // instructions than hand-written intrinsics took (scripts/reduce-insns.sh).
    if constexpr (Isa::kNeon && kDt == DataType::kFloat16) return neon::WidenFp16(s, d, n);
#endif
    for (size_t i = 0; i < n; ++i) d[i] = kWiden(s[i]);
  }
  template <typename Isa>
  [[gnu::always_inline]] static void Narrow(const float* s, uint16_t* d, size_t n) {
#if WEFT_HAVE_X86V3
    if constexpr (Isa::kF16c && kDt == DataType::kFloat16) return NarrowFp16F16c(s, d, n);
#endif
#if WEFT_HAVE_NEON
    if constexpr (Isa::kNeon && kDt == DataType::kFloat16) return neon::NarrowFp16(s, d, n);
    // Without BFCVTN, bfloat16 narrowing is integer rounding that the portable loop
    // already vectorises; hand-written NEON for it took more instructions.
    if constexpr (Isa::kBf16 && kDt == DataType::kBfloat16) return neon::NarrowBf16Bfcvt(s, d, n);
#endif
    for (size_t i = 0; i < n; ++i) d[i] = kNarrow(s[i]);
  }
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
  static constexpr RedOp kOp = RedOp::kSum;
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
  static constexpr RedOp kOp = RedOp::kProd;
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
  static constexpr RedOp kOp = RedOp::kMin;
  template <typename T>
  static T Apply(T a, T b) { return b < a ? b : a; }
};

struct Max {
  static constexpr RedOp kOp = RedOp::kMax;
  template <typename T>
  static T Apply(T a, T b) { return b > a ? b : a; }
};

// --- The kernel ---------------------------------------------------------------------------

// Widened block for float16/bfloat16: 2 x 1 KiB of floats stays in L1 and is long
// enough that the per-block overhead vanishes.
constexpr size_t kBlock = 256;

// d[i] = op(d[i], s[i]) over arrays of one type: the native kernels' whole loop, and
// the float arithmetic between widening and narrowing a float16/bfloat16 block.
template <typename T, typename Op, typename Isa>
[[gnu::always_inline]] inline void ArrayOp(T* d, const T* s, size_t n) {
#if WEFT_HAVE_NEON
  if constexpr (Isa::kNeon && neon::kHasVector<T, Op::kOp>) return neon::Reduce<T, Op>(d, s, n);
#endif
  for (size_t i = 0; i < n; ++i) d[i] = Op::Apply(d[i], s[i]);
}

// The one loop. Always inlined into a thin wrapper per instruction set, so that the
// wrapper's target attribute applies to the vectorised code.
template <typename E, typename Op, typename Isa>
[[gnu::always_inline]] inline void ReduceLoop(void* dst, const void* src, size_t count) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* d = static_cast<S*>(dst);
  const S* s = static_cast<const S*>(src);
  if constexpr (std::is_same_v<S, C>) {
    ArrayOp<C, Op, Isa>(d, s, count);
  } else {
    C a[kBlock];
    C b[kBlock];
    for (size_t base = 0; base < count; base += kBlock) {
      const size_t n = std::min(kBlock, count - base);
      E::template Widen<Isa>(d + base, a, n);
      E::template Widen<Isa>(s + base, b, n);
      ArrayOp<C, Op, Isa>(a, b, n);
      E::template Narrow<Isa>(a, d + base, n);
    }
  }
}

// dst = a (op) b: an out-of-place step's copy and reduce in one pass over memory. A
// loop of its own rather than ReduceLoop(dst, dst, src): with dst == a, GCC's run-time
// overlap check would send the in-place loop down its scalar path.
template <typename E, typename Op, typename Isa>
[[gnu::always_inline]] inline void ReduceIntoLoop(void* dst, const void* a, const void* b,
                                                  size_t count) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(a);
  const S* y = static_cast<const S*>(b);
  if constexpr (std::is_same_v<S, C>) {
#if WEFT_HAVE_NEON
    if constexpr (Isa::kNeon && neon::kHasVector<C, Op::kOp>) return neon::ReduceInto<C, Op>(d, x, y, count);
#endif
    for (size_t i = 0; i < count; ++i) d[i] = Op::Apply(x[i], y[i]);
  } else {
    C wa[kBlock];
    C wb[kBlock];
    for (size_t base = 0; base < count; base += kBlock) {
      const size_t n = std::min(kBlock, count - base);
      E::template Widen<Isa>(x + base, wa, n);
      E::template Widen<Isa>(y + base, wb, n);
      ArrayOp<C, Op, Isa>(wa, wb, n);
      E::template Narrow<Isa>(wa, d + base, n);
    }
  }
}

// The loops, instantiated once per instruction set; the tables below take
// &Kernels::Reduce<E, Op> and &Kernels::ReduceInto<E, Op> for every (element, op).
// Variants that need no target attribute (the build's baseline covers them): generic,
// and NEON, which every aarch64 build targets.
template <typename Isa>
struct BaselineKernels {
  template <typename E, typename Op>
  static void Reduce(void* dst, const void* src, size_t count) {
    ReduceLoop<E, Op, Isa>(dst, src, count);
  }
  template <typename E, typename Op>
  static void ReduceInto(void* dst, const void* a, const void* b, size_t count) {
    ReduceIntoLoop<E, Op, Isa>(dst, a, b, count);
  }
};
using GenericKernels = BaselineKernels<IsaGeneric>;

#if WEFT_HAVE_X86V3
struct X86V3Kernels {
  template <typename E, typename Op>
  WEFT_TARGET_X86V3 static void Reduce(void* dst, const void* src, size_t count) {
    ReduceLoop<E, Op, IsaX86V3>(dst, src, count);
  }
  template <typename E, typename Op>
  WEFT_TARGET_X86V3 static void ReduceInto(void* dst, const void* a, const void* b,
                                           size_t count) {
    ReduceIntoLoop<E, Op, IsaX86V3>(dst, a, b, count);
  }
};
#endif

#if WEFT_HAVE_NEON
using ArmNeonKernels = BaselineKernels<IsaArmNeon>;

struct ArmNeonBf16Kernels {
  template <typename E, typename Op>
  WEFT_TARGET_ARM_BF16 static void Reduce(void* dst, const void* src, size_t count) {
    ReduceLoop<E, Op, IsaArmNeonBf16>(dst, src, count);
  }
  template <typename E, typename Op>
  WEFT_TARGET_ARM_BF16 static void ReduceInto(void* dst, const void* a, const void* b,
                                              size_t count) {
    ReduceIntoLoop<E, Op, IsaArmNeonBf16>(dst, a, b, count);
  }
};
#endif

// Integers truncate toward zero (C++ `/`); floats divide (correctly rounded, unlike a
// multiplication by 1/divisor); float16/bfloat16 divide in float and round once.
template <typename E>
void DivideKernel(void* buf, size_t count, int divisor) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* p = static_cast<S*>(buf);
  if constexpr (std::is_same_v<S, C>) {
    // Integers in 64 bits, so that a divisor wider than the element (int8 over 200
    // ranks) is exact; signed stays signed so truncation is toward zero.
    if constexpr (std::is_integral_v<C>) {
      using W = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
      const W div = static_cast<W>(divisor);
      for (size_t i = 0; i < count; ++i) p[i] = static_cast<C>(static_cast<W>(p[i]) / div);
    } else {
      const C div = static_cast<C>(divisor);
      for (size_t i = 0; i < count; ++i) p[i] = p[i] / div;
    }
  } else {
    const C div = static_cast<C>(divisor);
    C a[kBlock];
    for (size_t base = 0; base < count; base += kBlock) {
      const size_t n = std::min(kBlock, count - base);
      S* pb = p + base;
      E::template Widen<IsaGeneric>(pb, a, n);
      for (size_t i = 0; i < n; ++i) a[i] /= div;
      E::template Narrow<IsaGeneric>(a, pb, n);
    }
  }
}

// --- The tables ---------------------------------------------------------------------------

using DivideFn = void (*)(void*, size_t, int);

template <typename E, typename K>
constexpr std::array<ReduceFn, kNumRedOps> kOpRow = {
    // kSum, kProd, kMin, kMax, kAvg (a sum; the caller divides once at the end)
    &K::template Reduce<E, Sum>, &K::template Reduce<E, Prod>, &K::template Reduce<E, Min>,
    &K::template Reduce<E, Max>, &K::template Reduce<E, Sum>};

template <typename E, typename K>
constexpr std::array<ReduceIntoFn, kNumRedOps> kOpRowInto = {
    &K::template ReduceInto<E, Sum>, &K::template ReduceInto<E, Prod>,
    &K::template ReduceInto<E, Min>, &K::template ReduceInto<E, Max>,
    &K::template ReduceInto<E, Sum>};

template <typename K, size_t... I>
constexpr auto MakeReduceTable(std::index_sequence<I...>) {
  static_assert(((std::tuple_element_t<I, Elements>::kType == static_cast<DataType>(I)) && ...),
                "Elements must list the types in DataType order");
  return std::array<std::array<ReduceFn, kNumRedOps>, kNumDataTypes>{
      kOpRow<std::tuple_element_t<I, Elements>, K>...};
}

template <typename K, size_t... I>
constexpr auto MakeReduceIntoTable(std::index_sequence<I...>) {
  return std::array<std::array<ReduceIntoFn, kNumRedOps>, kNumDataTypes>{
      kOpRowInto<std::tuple_element_t<I, Elements>, K>...};
}

template <size_t... I>
constexpr std::array<DivideFn, kNumDataTypes> MakeDivideTable(std::index_sequence<I...>) {
  return {DivideKernel<std::tuple_element_t<I, Elements>>...};
}

constexpr auto kIndices = std::make_index_sequence<kNumDataTypes>{};
constexpr auto kDivideTable = MakeDivideTable(kIndices);

using ReduceTable = std::array<std::array<ReduceFn, kNumRedOps>, kNumDataTypes>;
using ReduceIntoTable = std::array<std::array<ReduceIntoFn, kNumRedOps>, kNumDataTypes>;
struct IsaTables {
  const ReduceTable* reduce;
  const ReduceIntoTable* reduce_into;
};

template <typename K>
struct TablesFor {
  static constexpr ReduceTable kReduce = MakeReduceTable<K>(kIndices);
  static constexpr ReduceIntoTable kReduceInto = MakeReduceIntoTable<K>(kIndices);
  static constexpr IsaTables kTables = {&kReduce, &kReduceInto};
};

// The tables of one instruction set, or none where this build has no kernels for it.
IsaTables TablesOf(internal::ReduceIsa isa) {
  switch (isa) {
    case internal::ReduceIsa::kGeneric: return TablesFor<GenericKernels>::kTables;
#if WEFT_HAVE_X86V3
    case internal::ReduceIsa::kX86V3: return TablesFor<X86V3Kernels>::kTables;
#endif
#if WEFT_HAVE_NEON
    case internal::ReduceIsa::kArmNeon: return TablesFor<ArmNeonKernels>::kTables;
    case internal::ReduceIsa::kArmNeonBf16: return TablesFor<ArmNeonBf16Kernels>::kTables;
#endif
    default: return {nullptr, nullptr};
  }
}

bool ValidType(DataType dtype) {
  return static_cast<unsigned>(dtype) < static_cast<unsigned>(kNumDataTypes);
}

bool Valid(DataType dtype, RedOp op) {
  return ValidType(dtype) && static_cast<unsigned>(op) < static_cast<unsigned>(kNumRedOps);
}

// The selected variant's tables, looked up once per process: GetReduceFn runs on every
// reducing step, and that variant is runnable by construction.
IsaTables SelectedTables() {
  static const IsaTables tables = TablesOf(internal::SelectedReduceIsa());
  return tables;
}

}  // namespace

namespace internal {

ReduceFn GetReduceFnForIsa(DataType dtype, RedOp op, ReduceIsa isa) {
  const IsaTables tables = TablesOf(isa);
  if (!Valid(dtype, op) || tables.reduce == nullptr || !CpuRuns(isa)) return nullptr;
  return (*tables.reduce)[static_cast<int>(dtype)][static_cast<int>(op)];
}

bool IsaBuilt(ReduceIsa isa) { return TablesOf(isa).reduce != nullptr; }

ReduceIntoFn GetReduceIntoFnForIsa(DataType dtype, RedOp op, ReduceIsa isa) {
  const IsaTables tables = TablesOf(isa);
  if (!Valid(dtype, op) || tables.reduce_into == nullptr || !CpuRuns(isa)) return nullptr;
  return (*tables.reduce_into)[static_cast<int>(dtype)][static_cast<int>(op)];
}

}  // namespace internal

ReduceFn GetReduceFn(DataType dtype, RedOp op) {
  if (!Valid(dtype, op)) return nullptr;
  return (*SelectedTables().reduce)[static_cast<int>(dtype)][static_cast<int>(op)];
}

ReduceIntoFn GetReduceIntoFn(DataType dtype, RedOp op) {
  if (!Valid(dtype, op)) return nullptr;
  return (*SelectedTables().reduce_into)[static_cast<int>(dtype)][static_cast<int>(op)];
}

void DivideInPlace(void* buf, size_t count, DataType dtype, int divisor) {
  // divisor is a rank count; anything below 1 is a caller bug, and doing nothing is
  // safer than dividing by zero or overflowing INT_MIN / -1.
  if (!ValidType(dtype) || divisor <= 1) return;
  kDivideTable[static_cast<int>(dtype)](buf, count, divisor);
}

}  // namespace weft::exec
