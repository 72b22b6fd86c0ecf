// Internal helpers shared by the socket files: waiting for readiness with poll(2)
// under a Deadline, and naming a connected peer for error messages. Not part of the
// public socket API; callers outside src/net use socket.h.
#pragma once

#include <poll.h>

#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::net {

// Waits until `fd` reports one of `events` (or an error/hangup, which the caller then
// discovers from the next syscall). Ok when ready; DeadlineExceeded("<what>: timed
// out ...") when `deadline` passes first. EINTR is retried.
Status WaitReady(int fd, short events, const Deadline& deadline, const std::string& what);

// "1.2.3.4:5678" for the peer of a connected socket, or "" when unknown (the peer is
// already gone, or `fd` is not connected). For error messages only.
std::string PeerName(int fd);

}  // namespace weft::net
