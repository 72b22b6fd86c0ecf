// Socket helpers shared by the bootstrap store and the tcp transport: addresses,
// interface selection, listening, connecting and framed I/O, all bounded by a
// Deadline. EINTR is retried here, beside the syscalls; errno becomes a Status here.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::net {

// An owned file descriptor (closed on destruction; movable, not copyable).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { int f = fd_; fd_ = -1; return f; }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Whether parsing may ask DNS. Addresses that come from the wire (cards, ids) are always
// numeric: a peer must not be able to make us block in a resolver.
enum class Resolve { kNames, kNumericOnly };

// An IPv4 or IPv6 socket address.
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  // "1.2.3.4:5678" or "[fe80::1%eth0]:5678"
  std::string ToString() const;
  // Parses "host:port", "[v6]:port", "v4" (port 0); resolves names with getaddrinfo.
  static Result<SockAddr> Parse(const std::string& text, Resolve resolve = Resolve::kNames);
  // Parses a host (name or literal) and a separate port.
  static Result<SockAddr> FromHostPort(const std::string& host, uint16_t port,
                                       Resolve resolve = Resolve::kNames);
};

struct Interface {
  std::string name;   // "eth0"
  SockAddr addr;      // port 0
};

// Interfaces usable for weft traffic, per WEFT_SOCKET_IFNAME and WEFT_SOCKET_FAMILY:
//   WEFT_SOCKET_IFNAME="eth,ib"    names starting with eth or ib
//   WEFT_SOCKET_IFNAME="^docker,lo" all but names starting with docker or lo
//   WEFT_SOCKET_IFNAME="=eth0"      exactly eth0 (an "=" prefix makes every entry exact)
//   WEFT_SOCKET_FAMILY=AF_INET|AF_INET6  restricts the address family
// Default: every up interface except loopback and docker*; if there is none, loopback.
// IPv6 link-local addresses are skipped unless named explicitly. InvalidArgument when the
// variable selects nothing (the message lists the interfaces that exist).
// One entry per interface name, in getifaddrs order, with its best address: IPv4, then
// routable IPv6, then link-local IPv6 (which carries its scope id).
Result<std::vector<Interface>> SelectInterfaces();
// Same selection from explicit strings (for tests); `ifname_spec`/`family` as above.
Result<std::vector<Interface>> SelectInterfaces(const std::string& ifname_spec,
                                                const std::string& family);

// The name of the local interface that holds `addr`'s IP address (the port is ignored;
// IPv6 compares the scope id too), e.g. the source address of a connected socket:
// which interface the connection leaves by. nullopt when no up interface holds it, or
// getifaddrs fails. Blocking (a netlink query); safe from any thread.
std::optional<std::string> InterfaceWithAddress(const SockAddr& addr);

// A non-blocking listening socket on `addr` (port 0: any free port), SO_REUSEADDR.
Result<Fd> Listen(const SockAddr& addr, int backlog = 128);
// The address a socket is bound to (getsockname).
Result<SockAddr> LocalAddress(int fd);
// Accepts one connection, waiting until `deadline`. The new socket is blocking-mode
// unset (non-blocking), TCP_NODELAY set.
Result<Fd> Accept(int listen_fd, const Deadline& deadline);
// Connects, retrying refused/unreachable attempts with backoff until `deadline` (the
// listener may not be up yet). DeadlineExceeded names the address and the last error.
// The returned socket is non-blocking with TCP_NODELAY set, like Accept's.
Result<Fd> Connect(const SockAddr& addr, const Deadline& deadline);

Status SetNonBlocking(int fd, bool on);
Status SetNoDelay(int fd);
// Sets SO_SNDBUF/SO_RCVBUF (best effort; returns error only on EBADF-like failures).
Status SetBufferSizes(int fd, int bytes);

// Write/read exactly `n` bytes on a (blocking or non-blocking) socket, waiting with
// poll(2) until `deadline` (MSG_DONTWAIT is used, so the blocking mode does not matter).
// ReadFull: Unavailable if the peer closes first; both: Unavailable on reset/EPIPE,
// DeadlineExceeded saying how many bytes moved. Neither raises SIGPIPE.
Status WriteFull(int fd, const void* data, size_t n, const Deadline& deadline);
Status ReadFull(int fd, void* data, size_t n, const Deadline& deadline);

}  // namespace weft::net
