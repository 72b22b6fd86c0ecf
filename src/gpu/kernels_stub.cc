// Without WEFT_CUDA there is no device to launch on.
#if !WEFT_HAVE_CUDA
#include "gpu/kernels.h"
#include "gpu/runtime.h"

namespace weft::gpu {

Status ReduceN(void*, const void* const*, int, size_t, DataType, RedOp, int, void*) {
  return InvalidArgument(UnavailableReason());
}

}  // namespace weft::gpu
#endif
