// Small checks and buffer helpers shared by the backend's operations.
#pragma once

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace weft_torch {

// weft works on host memory: refuses CUDA/meta/sparse tensors with a message naming `op`.
void CheckCpuDense(const at::Tensor& t, const char* op);
void CheckSameType(const at::Tensor& a, const at::Tensor& b, const char* op);

inline size_t Bytes(const at::Tensor& t) {
  return static_cast<size_t>(t.numel()) * t.element_size();
}

// Results that must reach the caller's tensors after completion: (destination, source).
using CopyBacks = std::vector<std::pair<at::Tensor, at::Tensor>>;

// A contiguous buffer holding t's values. Non-contiguous tensors get a contiguous copy;
// when `is_output`, the copy is registered to be copied back into t on success.
at::Tensor ContiguousBuffer(const at::Tensor& t, bool is_output, CopyBacks& copy_backs);

// Runs every copy-back (on the completer thread, after weft finished).
void RunCopyBacks(const CopyBacks& copy_backs);

}  // namespace weft_torch
