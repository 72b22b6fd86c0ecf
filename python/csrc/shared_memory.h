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

// weft.torch.use_shared_memory: installs an allocator as torch's CPU allocator
// (c10::SetCPUAllocator; torch.empty, and DDP's gradient buckets, allocate through it) that
// places every allocation of at least `min_bytes` in weft's shared memory and leaves the
// smaller ones to the allocator it replaced. Called again, it changes the threshold.
// Throws std::invalid_argument for a min_bytes of 0, and std::runtime_error when another
// allocator of higher priority keeps torch's place.
void UseSharedCpuAllocator(size_t min_bytes);
// weft.torch.use_default_memory: torch's CPU allocator as it was before, for later
// allocations (tensors already in weft's memory keep it until they are freed). A no-op
// when weft's allocator is not installed.
void UseDefaultCpuAllocator();
// The threshold of the installed allocator; 0 when it is not installed.
size_t SharedCpuAllocatorMinBytes();

}  // namespace weft_torch
