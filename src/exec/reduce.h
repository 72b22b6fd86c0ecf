// CPU reduction kernels over (dtype, op), chosen once per call, never per element.
// float16 and bfloat16 are widened to float32 for the arithmetic and rounded back
// (round-to-nearest-even). Integer arithmetic wraps (unsigned semantics for overflow).
#pragma once

#include <cstddef>

#include "core/types.h"

namespace weft::exec {

// dst[i] = dst[i] (op) src[i] for i in [0, count). kAvg reduces as kSum (the caller
// divides once at the end with DivideInPlace). dst and src must not partially overlap.
using ReduceFn = void (*)(void* dst, const void* src, size_t count);
ReduceFn GetReduceFn(DataType dtype, RedOp op);

// dst[i] = a[i] (op) b[i]: "copy a to dst, then reduce b into it" in one pass, as the
// executor runs that pair of schedule steps. dst may be a; b must not overlap dst.
using ReduceIntoFn = void (*)(void* dst, const void* a, const void* b, size_t count);
ReduceIntoFn GetReduceIntoFn(DataType dtype, RedOp op);

// buf[i] /= divisor (integers: truncating division), for kAvg.
void DivideInPlace(void* buf, size_t count, DataType dtype, int divisor);

}  // namespace weft::exec
