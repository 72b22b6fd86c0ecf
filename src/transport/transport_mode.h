// Which transports a communicator runs (WEFT_TRANSPORT): every rank's card carries it
// (card.h), and Mesh::Connect chooses each pair's transport from it.
#pragma once

#include "core/status.h"

namespace weft::transport {

// kShmOfi: shm to peers on this host, ofi (libfabric) to the others. kAuto resolves to
// kShmOfi on every rank when every rank found a real fabric (ResolvedMode, card.h),
// else it is shm to this host and tcp to the others.
enum class TransportMode { kAuto, kTcp, kShm, kOfi, kShmOfi };

// Parses WEFT_TRANSPORT ("", "auto", "tcp", "shm", "ofi", "shm+ofi"); InvalidArgument
// otherwise, and for "ofi" and "shm+ofi" in a build without libfabric (WEFT_OFI=OFF).
Result<TransportMode> TransportModeFromEnv();

const char* TransportModeName(TransportMode mode);  // "auto", "tcp", "shm", "ofi", "shm+ofi"

// Whether the pair of this rank and a peer runs over ofi in `mode` (resolved: never
// kAuto), given whether the peer is on this host.
inline bool UsesOfi(TransportMode mode, bool same_host) {
  return mode == TransportMode::kOfi || (mode == TransportMode::kShmOfi && !same_host);
}

}  // namespace weft::transport
