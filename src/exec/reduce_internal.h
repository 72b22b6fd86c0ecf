// Below GetReduceFn: the kernels for one explicit instruction set. GetReduceFn picks
// the best one this CPU runs, once per process; tests and benchmarks use this to cover
// and compare every variant on one machine.
#pragma once

#include <iterator>

#include "exec/reduce.h"

namespace weft::exec::internal {

enum class ReduceIsa {
  kGeneric,      // the build's baseline (SSE2 on x86-64, Advanced SIMD on aarch64)
  kX86V3,        // AVX2 + F16C + FMA (x86-64-v3)
  kArmNeon,      // aarch64 NEON intrinsics, float16 through FCVTL/FCVTN
  kArmNeonBf16,  // kArmNeon + BFCVTN for bfloat16 (FEAT_BF16)
};
inline constexpr ReduceIsa kAllReduceIsas[] = {ReduceIsa::kGeneric, ReduceIsa::kX86V3,
                                               ReduceIsa::kArmNeon, ReduceIsa::kArmNeonBf16};
static_assert([] {
  for (size_t i = 0; i < std::size(kAllReduceIsas); ++i)
    if (static_cast<size_t>(kAllReduceIsas[i]) != i) return false;
  return true;
}(), "kAllReduceIsas lists ReduceIsa in enum order");

// nullptr if dtype/op are invalid, or the variant is not built or not runnable here.
ReduceFn GetReduceFnForIsa(DataType dtype, RedOp op, ReduceIsa isa);
ReduceIntoFn GetReduceIntoFnForIsa(DataType dtype, RedOp op, ReduceIsa isa);
const char* ReduceIsaName(ReduceIsa isa);
bool IsaBuilt(ReduceIsa isa);   // this build has kernels for it (this architecture's)
bool CpuRuns(ReduceIsa isa);    // this CPU has the instructions (reduce_isa.cc)
ReduceIsa SelectedReduceIsa();  // the one GetReduceFn uses

}  // namespace weft::exec::internal
