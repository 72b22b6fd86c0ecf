#include "transport/transport_mode.h"

#include <fmt/format.h>

#include <string>

#include "core/env.h"

namespace weft::transport {

Result<TransportMode> TransportModeFromEnv() {
  std::string v = GetEnv("WEFT_TRANSPORT").value_or("");
  if (v.empty() || v == "auto") return TransportMode::kAuto;
  if (v == "tcp") return TransportMode::kTcp;
  if (v == "shm") return TransportMode::kShm;
  if (v == "ofi" || v == "shm+ofi") {
    // Refused here, when the communicator starts, rather than later by Mesh::Connect.
#ifdef WEFT_HAVE_OFI
    return v == "ofi" ? TransportMode::kOfi : TransportMode::kShmOfi;
#else
    return InvalidArgument(fmt::format(
        "WEFT_TRANSPORT={}, but this weft was built without libfabric (WEFT_OFI=OFF; install "
        "libfabric-dev and rebuild)",
        v));
#endif
  }
  return InvalidArgument(
      fmt::format("WEFT_TRANSPORT='{}' is not one of: auto, tcp, shm, ofi, shm+ofi", v));
}

const char* TransportModeName(TransportMode mode) {
  switch (mode) {
    case TransportMode::kAuto:
      return "auto";
    case TransportMode::kTcp:
      return "tcp";
    case TransportMode::kShm:
      return "shm";
    case TransportMode::kOfi:
      return "ofi";
    case TransportMode::kShmOfi:
      return "shm+ofi";
  }
  return "?";
}

}  // namespace weft::transport
