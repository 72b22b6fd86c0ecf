// Fd ownership and per-socket options.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>

#include "net/socket.h"

namespace weft::net {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

Fd::~Fd() { reset(); }

void Fd::reset(int fd) {
  // close(2) is not retried on EINTR: on Linux the descriptor is released either way,
  // and retrying could close a descriptor another thread has just been given.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Status SetNonBlocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return ErrnoStatus("fcntl(F_GETFL)", errno);
  int want = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (want != flags && ::fcntl(fd, F_SETFL, want) < 0)
    return ErrnoStatus("fcntl(F_SETFL, O_NONBLOCK)", errno);
  return Status::Ok();
}

Status SetNoDelay(int fd) {
  int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    return ErrnoStatus("setsockopt(TCP_NODELAY)", errno);
  return Status::Ok();
}

Status SetBufferSizes(int fd, int bytes) {
  // The kernel clamps to net.core.{w,r}mem_max without failing, so only a bad
  // descriptor (or similar) is reported; the sizes themselves are best effort.
  for (int opt : {SO_SNDBUF, SO_RCVBUF}) {
    if (::setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) != 0)
      return ErrnoStatus(opt == SO_SNDBUF ? "setsockopt(SO_SNDBUF)" : "setsockopt(SO_RCVBUF)",
                         errno);
  }
  return Status::Ok();
}

}  // namespace weft::net
