#include "net/wait.h"

#include <poll.h>

#include <cerrno>

#include "net/socket.h"

namespace weft::net {

Status WaitReady(int fd, short events, const Deadline& deadline, const std::string& what) {
  pollfd p{fd, events, 0};
  for (;;) {
    if (deadline.expired()) return DeadlineExceeded(what + ": timed out");
    int rc = ::poll(&p, 1, deadline.RemainingMs());
    if (rc > 0) return Status::Ok();  // ready, or POLLERR/POLLHUP: the next syscall says which
    if (rc == 0) continue;            // re-check the deadline (RemainingMs rounds up)
    if (errno == EINTR) continue;
    return ErrnoStatus(what + ": poll", errno);
  }
}

std::string PeerName(int fd) {
  SockAddr a;
  a.len = sizeof(a.storage);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.len) != 0) return "";
  return a.ToString();
}

}  // namespace weft::net
