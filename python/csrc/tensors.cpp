#include "tensors.h"

#include <c10/util/Exception.h>

namespace weft_torch {

void CheckCpuDense(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined(), "weft ", op, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "weft ", op, ": tensors must be on the CPU (got ",
              t.device(), "); this build of weft has no device support");
  TORCH_CHECK(t.layout() == at::kStrided, "weft ", op, ": only dense tensors are supported");
}

void CheckSameType(const at::Tensor& a, const at::Tensor& b, const char* op) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "weft ", op,
                   ": tensors must have one dtype (got ", a.scalar_type(), " and ",
                   b.scalar_type(), ")");
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

}  // namespace weft_torch
