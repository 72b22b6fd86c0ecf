// Unpredictable bytes from the kernel (getrandom(2)), for handshake nonces and secrets.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace weft {

// Fills `n` bytes. Blocks only while the kernel's pool is not yet initialised (early
// boot); Internal on any other failure (never falls back to a weaker source).
Status RandomBytes(void* out, size_t n);

}  // namespace weft
