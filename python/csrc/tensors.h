// Small checks and buffer helpers shared by the backend's operations.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

namespace weft_torch {

// Refuses undefined, non-dense (sparse, ...) tensors and tensors on a device weft cannot
// take: anything but the CPU and CUDA, and CUDA too when weft._C was built without CUDA
// support (the message says why, cuda_path.h). `op` names the operation in the message.
void CheckDense(const at::Tensor& t, const char* op);
void CheckSameType(const at::Tensor& a, const at::Tensor& b, const char* op);

// The one device every tensor of an operation is on: the CPU, or one CUDA device.
// Refuses a mixture (CPU with CUDA, or two CUDA devices) naming both devices; the CPU
// when there are no tensors at all. Applies CheckDense to each tensor.
c10::Device OpDevice(std::initializer_list<at::ArrayRef<at::Tensor>> groups, const char* op);

inline size_t Bytes(const at::Tensor& t) {
  return static_cast<size_t>(t.numel()) * t.element_size();
}

// Results that must reach the caller's tensors after completion: (destination, source).
using CopyBacks = std::vector<std::pair<at::Tensor, at::Tensor>>;

// A contiguous buffer holding t's values. Non-contiguous tensors get a contiguous copy;
// when `is_output`, the copy is registered to be copied back into t on success.
at::Tensor ContiguousBuffer(const at::Tensor& t, bool is_output, CopyBacks& copy_backs);

// Runs every copy-back: on the completer thread after weft finished (CPU tensors), or on
// the current CUDA stream right after weft's stream calls (CUDA tensors).
void RunCopyBacks(const CopyBacks& copy_backs);
// The same as an operation's on_success: null when there is nothing to copy back.
std::function<void()> CopyBackFn(CopyBacks copy_backs);

// The one tensor of an operation that takes one per call (CheckDense applied).
const at::Tensor& Single(const std::vector<at::Tensor>& tensors, const char* op);

// A stream call's pointer for `t`: NULL when it holds no bytes. An empty CUDA tensor's
// data pointer may be NULL or not; passing NULL on both sides of an empty message keeps
// weft from seeing a device buffer on one rank and a host one on the other.
inline void* StreamPtr(const at::Tensor& t) { return Bytes(t) > 0 ? t.data_ptr() : nullptr; }

}  // namespace weft_torch
