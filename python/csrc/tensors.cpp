#include "tensors.h"

#include <c10/util/Exception.h>

#include "cuda_path.h"

namespace weft_torch {

void CheckDense(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined(), "weft ", op, ": undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, "weft ", op, ": only dense tensors are supported");
  if (t.device().is_cpu()) return;
  TORCH_CHECK(t.device().is_cuda(), "weft ", op, ": tensors must be on the CPU or a CUDA "
              "device (got ", t.device(), ")");
  TORCH_CHECK(CudaBuilt(), "weft ", op, ": got a tensor on ", t.device(), " but weft._C was "
              "built without CUDA support: ", CudaMissingReason(), ". Use CPU tensors, or "
              "rebuild weft._C where torch has CUDA and the CUDA toolkit's headers are found "
              "(pip install --no-build-isolation --force-reinstall --no-deps ./python)");
}

void CheckSameType(const at::Tensor& a, const at::Tensor& b, const char* op) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "weft ", op,
                   ": tensors must have one dtype (got ", a.scalar_type(), " and ",
                   b.scalar_type(), ")");
}

c10::Device OpDevice(std::initializer_list<at::ArrayRef<at::Tensor>> groups, const char* op) {
  const at::Tensor* first = nullptr;
  for (at::ArrayRef<at::Tensor> group : groups) {
    for (const at::Tensor& t : group) {
      CheckDense(t, op);
      if (first == nullptr) {
        first = &t;
        continue;
      }
      TORCH_CHECK(t.device() == first->device(), "weft ", op, ": all tensors of one "
                  "operation must be on one device, got ", first->device(), " and ",
                  t.device(), " (CPU and CUDA tensors cannot be mixed in one call; a group "
                  "takes either in separate calls)");
    }
  }
  return first == nullptr ? c10::Device(c10::kCPU) : first->device();
}

at::Tensor ContiguousBuffer(const at::Tensor& t, bool is_output, CopyBacks& copy_backs) {
  if (t.is_contiguous()) return t;
  at::Tensor buf = t.contiguous();
  if (is_output) copy_backs.emplace_back(t, buf);
  return buf;
}

void RunCopyBacks(const CopyBacks& copy_backs) {
  for (const auto& [dst, src] : copy_backs) dst.copy_(src);
}

std::function<void()> CopyBackFn(CopyBacks copy_backs) {
  if (copy_backs.empty()) return nullptr;
  return [cb = std::move(copy_backs)] { RunCopyBacks(cb); };
}

const at::Tensor& Single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "weft ", op, ": expects one tensor per call (got ",
              tensors.size(), ")");
  CheckDense(tensors[0], op);
  return tensors[0];
}

}  // namespace weft_torch
