// Writes that bypass the cache (non-temporal stores), for results too large to stay in
// it. A normal store to a line not in cache first reads the line (read-for-ownership),
// so writing a large output costs a read and a write of memory; a streaming store costs
// the write alone. Measured on this project's 2-core VM: dst = a + b over 8 MiB of
// float32 in 580 us with normal stores, 327 us streaming; at 1 MiB both 37 us (it
// fits in cache), hence only for large outputs (docs/BENCHMARKS.md).
#pragma once

#include <cstddef>

#include "exec/reduce.h"

namespace weft::exec {

// Copies `bytes` from `src` to `dst` with streaming stores where dst is 16-byte aligned
// (plain stores for the unaligned head and tail, and on CPUs without them). Call
// StreamingFence() before another thread or process may read dst.
void StreamingCopy(void* dst, const void* src, size_t bytes);
void StreamingFence();

// `fn(dst, a, b, count)` with dst written by streaming stores: each 4 KiB block is
// reduced into an L1-resident buffer, then streamed out. Same aliasing rules as fn (dst
// may be a; b must not overlap dst). Ends with StreamingFence().
void ReduceIntoStreaming(ReduceIntoFn fn, size_t esize, void* dst, const void* a, const void* b,
                         size_t count);

}  // namespace weft::exec
