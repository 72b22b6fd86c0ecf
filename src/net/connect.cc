// Establishing connections: Listen, Accept and Connect, each bounded by a Deadline.
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "net/socket.h"
#include "net/wait.h"

namespace weft::net {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Errors that mean "the listener is not there (yet)" or "the path is flapping":
// worth another attempt until the deadline, since ranks start in any order.
bool Retryable(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
         err == ENETUNREACH || err == ECONNRESET || err == ECONNABORTED || err == EAGAIN;
}

Result<Fd> NewTcpSocket(int family, const std::string& what) {
  Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(what + ": socket", errno);
  return fd;
}

// One connect attempt. Ok(fd) on success; otherwise the errno of the failure in `err`
// (0 when the deadline passed while the attempt was still in flight).
Result<Fd> TryConnect(const SockAddr& addr, const Deadline& deadline, const std::string& what,
                      int* err) {
  *err = 0;
  WEFT_ASSIGN_OR_RETURN(Fd fd, NewTcpSocket(addr.family(), what));
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.len);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINPROGRESS) {
    *err = errno;
    return ErrnoStatus(what, errno);
  }
  if (rc != 0) {
    Status ready = WaitReady(fd.get(), POLLOUT, deadline, what);
    if (!ready.ok()) return ready;  // deadline (err stays 0) or a poll failure
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0)
      return ErrnoStatus(what + ": getsockopt(SO_ERROR)", errno);
    if (so_error != 0) {
      *err = so_error;
      return ErrnoStatus(what, so_error);
    }
  }
  WEFT_RETURN_IF_ERROR(SetNoDelay(fd.get()).WithContext(what));
  return fd;
}

}  // namespace

Result<Fd> Listen(const SockAddr& addr, int backlog) {
  std::string what = "listen on " + addr.ToString();
  WEFT_ASSIGN_OR_RETURN(Fd fd, NewTcpSocket(addr.family(), what));
  int one = 1;
  // SO_REUSEADDR: a restarted job can bind the port of one whose sockets sit in TIME_WAIT.
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
    return ErrnoStatus(what + ": setsockopt(SO_REUSEADDR)", errno);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.len) != 0)
    return ErrnoStatus(what + ": bind", errno);
  if (::listen(fd.get(), backlog) != 0) return ErrnoStatus(what + ": listen", errno);
  return fd;
}

Result<SockAddr> LocalAddress(int fd) {
  SockAddr a;
  a.len = sizeof(a.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.len) != 0)
    return ErrnoStatus("getsockname", errno);
  return a;
}

Result<Fd> Accept(int listen_fd, const Deadline& deadline) {
  auto local = LocalAddress(listen_fd);
  std::string what = "accept on " + (local.ok() ? local->ToString() : "fd " + std::to_string(listen_fd));
  auto start = Clock::now();
  for (;;) {
    Fd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.valid()) {
      WEFT_RETURN_IF_ERROR(SetNoDelay(fd.get()).WithContext(what));
      return fd;
    }
    int err = errno;
    // EINTR: retry. ECONNABORTED: a client gave up while queued; wait for the next one.
    if (err == EINTR || err == ECONNABORTED) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) return ErrnoStatus(what, err);
    Status ready = WaitReady(listen_fd, POLLIN, deadline, what);
    if (ready.code() == Code::kDeadlineExceeded)
      return DeadlineExceeded(
          fmt::format("{}: no connection within {:.1f} s", what, SecondsSince(start)));
    WEFT_RETURN_IF_ERROR(ready);
  }
}

Result<Fd> Connect(const SockAddr& addr, const Deadline& deadline) {
  std::string what = "connect to " + addr.ToString();
  auto start = Clock::now();
  auto backoff = std::chrono::milliseconds(10);
  // Jitter keeps hundreds of ranks started together from retrying in lockstep.
  std::minstd_rand rng(static_cast<unsigned>(Clock::now().time_since_epoch().count()));
  std::string last_error = "no answer";
  int attempts = 0;
  for (;;) {
    ++attempts;
    int err = 0;
    auto r = TryConnect(addr, deadline, what, &err);
    if (r.ok()) return r;
    if (err == 0 && r.status().code() != Code::kDeadlineExceeded) return r.status();
    if (err != 0 && !Retryable(err)) return r.status();
    if (err != 0) last_error = r.status().message().substr(what.size() + 2);
    if (deadline.expired() || err == 0)
      return DeadlineExceeded(fmt::format("{}: timed out after {:.1f} s, {} attempt(s) (last: {})",
                                          what, SecondsSince(start), attempts, last_error));
    auto pause = backoff + std::chrono::milliseconds(rng() % (backoff.count() / 2 + 1));
    auto left = deadline.at() - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

}  // namespace weft::net
