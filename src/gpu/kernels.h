// Device kernels, launched on a caller's stream. Without WEFT_CUDA these return
// InvalidArgument (there is no device to run on).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "core/types.h"

namespace weft::gpu {

// Inputs one kernel launch reads; ReduceN chains launches for more.
inline constexpr int kMaxReduceInputs = 8;

// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i] for i < count (avg: the sum divided
// by `divisor` once at the end). Every pointer must be device-accessible from the
// current device (its own memory, or a peer's mapped through CUDA IPC). out may equal
// any in[r] (each element is read before it is written by the same thread), but must
// not partially overlap one. Vectorised to 16-byte accesses when every pointer is
// 16-byte aligned. See gpu/reduce_math.h for the arithmetic.
Status ReduceN(void* out, const void* const* in, int n, size_t count, DataType dtype, RedOp op,
               int divisor, void* stream);

}  // namespace weft::gpu
