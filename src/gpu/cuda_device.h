// The CUDA implementation of the device seam (gpu/device.h).
#pragma once

#include <string>

#include "gpu/device.h"

namespace weft::gpu {

// The process's CUDA device, or nullptr with `*why` set: weft built without CUDA,
// WEFT_CUDA=0, no usable driver, or no visible device. Probes once (the first call
// initialises the runtime, which costs milliseconds).
Device* CudaDeviceOrNull(std::string* why);

}  // namespace weft::gpu
