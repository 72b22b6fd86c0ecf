#include "shared_memory.h"

#include <weft/weft.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "backend.h"

namespace weft_torch {

at::Tensor EmptyShared(const std::vector<int64_t>& sizes, at::ScalarType dtype) {
  const size_t elem = c10::elementSize(dtype);
  size_t bytes = elem;
  for (int64_t s : sizes) {
    if (s < 0) {
      throw std::invalid_argument("weft.torch.empty: negative size " + std::to_string(s));
    }
    if (s != 0 && bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(s)) {
      throw std::invalid_argument("weft.torch.empty: the tensor's size overflows");
    }
    bytes *= static_cast<size_t>(s);
  }
  // weftMemAlloc refuses 0 bytes; an empty tensor still gets a (one-element) buffer.
  void* ptr = nullptr;
  if (weftMemAlloc(&ptr, bytes == 0 ? elem : bytes) != weftSuccess) {
    throw std::runtime_error(std::string("weft.torch.empty: ") + weftGetLastError(nullptr));
  }
  return at::from_blob(
      ptr, sizes, [](void* p) { weftMemFree(p); },
      at::TensorOptions().dtype(dtype).device(at::kCPU));
}

at::Tensor WeftBackend::allocateTensor(long size, at::TensorOptions options) {
  TORCH_CHECK_VALUE(!options.has_device() || options.device().is_cpu(),
                    "weft allocate_tensor: rank ", rank_, ": weft allocates CPU tensors only (its "
                    "shared memory), not on ", options.device(),
                    "; supports_tensor_alloc says so for a device with an index");
  return EmptyShared({static_cast<int64_t>(size)},
                     c10::typeMetaToScalarType(options.dtype()));
}

}  // namespace weft_torch
