// CUDA kernels, launched on a stream; built with WEFT_CUDA only, and called by the CUDA
// device (gpu/cuda_device.cc). The rest of weft reaches them through gpu/device.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "core/types.h"

namespace weft::gpu {

// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i] for i < count (avg: the sum divided
// by `divisor` once at the end), in launches of kMaxReduceInputs inputs
// (gpu/reduce_batches.h). Every pointer must be device-accessible from the current
// device (its own memory, or a peer's mapped through CUDA IPC). out may equal any in[r],
// but must not partially overlap one. Vectorised to 16-byte accesses when every pointer
// is 16-byte aligned. See gpu/reduce_math.h for the arithmetic.
Status ReduceN(void* out, const void* const* in, int n, size_t count, DataType dtype, RedOp op,
               int divisor, void* stream);

// Holds the stream for `microseconds` (one spinning thread).
Status SpinFor(int64_t microseconds, void* stream);

}  // namespace weft::gpu
