// WriteFull / ReadFull: move exactly n bytes, waiting with poll(2) until the deadline.
#include <sys/socket.h>

#include <cerrno>

#include <fmt/format.h>

#include "net/socket.h"
#include "net/wait.h"

namespace weft::net {
namespace {

std::string Peer(int fd) {
  std::string p = PeerName(fd);
  return p.empty() ? fmt::format("fd {}", fd) : p;
}

}  // namespace

Status WriteFull(int fd, const void* data, size_t n, const Deadline& deadline) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < n) {
    // MSG_NOSIGNAL: a closed peer must become a Status, not a SIGPIPE that kills the rank.
    // MSG_DONTWAIT: even on a blocking-mode socket the wait happens in poll, under the deadline.
    ssize_t w = ::send(fd, p + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      done += static_cast<size_t>(w);
      continue;
    }
    int err = errno;
    if (w < 0 && err == EINTR) continue;
    if (w < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
      Status ready = WaitReady(fd, POLLOUT, deadline, "write");
      if (ready.code() == Code::kDeadlineExceeded)
        return DeadlineExceeded(fmt::format("write to {}: timed out with {} of {} bytes sent",
                                            Peer(fd), done, n));
      WEFT_RETURN_IF_ERROR(ready);
      continue;
    }
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN)
      return Unavailable(fmt::format("write to {}: peer closed the connection ({} of {} bytes sent)",
                                     Peer(fd), done, n));
    return ErrnoStatus(fmt::format("write to {}", Peer(fd)), err);
  }
  return Status::Ok();
}

Status ReadFull(int fd, void* data, size_t n, const Deadline& deadline) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::recv(fd, p + done, n - done, MSG_DONTWAIT);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r == 0)
      return Unavailable(fmt::format("read from {}: peer closed the connection ({} of {} bytes read)",
                                     Peer(fd), done, n));
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      Status ready = WaitReady(fd, POLLIN, deadline, "read");
      if (ready.code() == Code::kDeadlineExceeded)
        return DeadlineExceeded(fmt::format("read from {}: timed out with {} of {} bytes read",
                                            Peer(fd), done, n));
      WEFT_RETURN_IF_ERROR(ready);
      continue;
    }
    if (err == ECONNRESET || err == ENOTCONN)
      return Unavailable(fmt::format("read from {}: connection reset by peer ({} of {} bytes read)",
                                     Peer(fd), done, n));
    return ErrnoStatus(fmt::format("read from {}", Peer(fd)), err);
  }
  return Status::Ok();
}

}  // namespace weft::net
