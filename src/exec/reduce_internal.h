// Below GetReduceFn: the kernels for one explicit instruction set. GetReduceFn picks
// the best one this CPU runs, once per process; tests and benchmarks use this to cover
// and compare every variant on one machine.
#pragma once

#include "exec/reduce.h"

namespace weft::exec::internal {

enum class ReduceIsa {
  kGeneric,  // the build's baseline (SSE2 on x86-64)
  kX86V3,    // AVX2 + F16C + FMA (x86-64-v3)
};

// nullptr if dtype/op are invalid, or the variant is not built or not runnable here.
ReduceFn GetReduceFnForIsa(DataType dtype, RedOp op, ReduceIsa isa);
ReduceIntoFn GetReduceIntoFnForIsa(DataType dtype, RedOp op, ReduceIsa isa);
const char* ReduceIsaName(ReduceIsa isa);
ReduceIsa SelectedReduceIsa();  // the one GetReduceFn uses

}  // namespace weft::exec::internal
