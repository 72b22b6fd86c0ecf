// weft.torch.empty: CPU tensors in weft's shared memory (weftMemAlloc), which the other
// ranks of the host read and write in place: collectives on them run in a single pass
// (docs/TRANSPORTS.md, "Registered buffers") without registration.
#pragma once

#include <torch/types.h>

#include <vector>

namespace weft_torch {

// A tensor of `sizes` and `dtype` on the CPU, zero-filled, whose storage is one
// weftMemAlloc buffer, freed with weftMemFree when the storage dies. Throws
// std::invalid_argument for a negative size or one too large, and std::runtime_error
// with weft's message when the allocation fails.
at::Tensor EmptyShared(const std::vector<int64_t>& sizes, at::ScalarType dtype);

}  // namespace weft_torch
