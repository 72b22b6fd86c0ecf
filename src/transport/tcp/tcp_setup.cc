#include "transport/tcp/tcp_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/env.h"
#include "core/log.h"

namespace weft::transport::tcp {
namespace {

inline constexpr uint32_t kHandshakeMagic = 0x48544657;  // "WFTH" little-endian
inline constexpr uint16_t kHandshakeVersion = 1;

#pragma pack(push, 1)
struct Handshake {
  uint32_t magic = kHandshakeMagic;
  uint16_t version = kHandshakeVersion;
  uint16_t rail = 0;  // which of the pair's connections (multi-rail); 0 with one rail
  uint64_t comm_id = 0;
  int32_t rank = -1;
  int32_t size = 0;
};
#pragma pack(pop)
static_assert(sizeof(Handshake) == 24);

// With several addresses to try, one that silently drops SYNs must not eat the whole
// deadline: each attempt gets at most this long before the next address is tried.
constexpr auto kPerAddressAttempt = std::chrono::seconds(1);
// The acceptor answers a handshake at once; an answer that cannot be written within
// this is a dead or misbehaving client.
constexpr double kHandshakeReplySeconds = 1.0;
// Kernel socket buffer size asked for on data connections.
constexpr int kSocketBufferBytes = 4 << 20;

Deadline Earlier(const Deadline& d, std::chrono::nanoseconds from_now) {
  Deadline other = Deadline::After(from_now);
  return other.at() < d.at() ? other : d;
}

std::string PeerAddress(int fd) {
  net::SockAddr a;
  a.len = sizeof(a.storage);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.len) != 0) return "unknown";
  return a.ToString();
}

std::string JoinAddrs(const std::vector<net::SockAddr>& addrs) {
  std::vector<std::string> s;
  for (const auto& a : addrs) s.push_back(a.ToString());
  return fmt::format("{}", fmt::join(s, ", "));
}

long long ReadSysctl(const char* path) {
  std::ifstream in(path);
  long long v = -1;
  in >> v;
  return in ? v : -1;
}

std::vector<PeerRail>::const_iterator FindPeerRail(const std::vector<PeerRail>& v, int rank,
                                                   int rail) {
  return std::find_if(v.begin(), v.end(),
                      [&](const PeerRail& p) { return p.rank == rank && p.rail == rail; });
}

// "" when `h` is a handshake this rank expects next, else why not.
std::string HandshakeProblem(const Handshake& h, uint64_t comm_id, int size,
                             const std::vector<PeerRail>& accept_from,
                             const std::vector<bool>& connected) {
  if (h.magic != kHandshakeMagic || h.version != kHandshakeVersion)
    return fmt::format("not a weft handshake (magic {:#x} version {})", h.magic, h.version);
  if (h.comm_id != comm_id)
    return fmt::format("it belongs to communicator {:#x}, not {:#x}", h.comm_id, comm_id);
  if (h.size != size) return fmt::format("it claims world size {}, not {}", h.size, size);
  auto it = FindPeerRail(accept_from, h.rank, h.rail);
  std::string who = h.rail == 0 ? fmt::format("rank {}", h.rank)
                                : fmt::format("rank {} (rail {})", h.rank, h.rail);
  if (it == accept_from.end()) return who + " is not expected to connect here";
  if (connected[it - accept_from.begin()]) return who + " is already connected";
  return "";
}

Result<TcpConnection> ConnectOne(int self, int size, uint64_t comm_id, const TcpPeer& peer,
                                 const Deadline& deadline) {
  if (peer.addrs.empty())
    return ProtocolError(
        fmt::format("rank {}: rank {} advertised no tcp address", self, peer.rank));
  Handshake mine;
  mine.comm_id = comm_id;
  mine.rank = self;
  mine.size = size;
  mine.rail = static_cast<uint16_t>(peer.rail);
  Status last;
  while (true) {
    for (const net::SockAddr& addr : peer.addrs) {
      Deadline attempt = peer.addrs.size() == 1 ? deadline : Earlier(deadline, kPerAddressAttempt);
      Result<net::Fd> fd = net::Connect(addr, attempt);
      if (!fd.ok()) {
        last = fd.status();
        if (deadline.expired()) break;
        continue;
      }
      // The acceptor may still be busy connecting to its own lower ranks, so its answer
      // is waited for under the whole deadline.
      Handshake reply;
      Status s = net::WriteFull(fd->get(), &mine, sizeof(mine), deadline);
      if (s.ok()) s = net::ReadFull(fd->get(), &reply, sizeof(reply), deadline);
      if (s.ok() && (reply.magic != kHandshakeMagic || reply.version != kHandshakeVersion ||
                     reply.comm_id != comm_id || reply.rank != peer.rank)) {
        s = ProtocolError(fmt::format(
            "{} answered as rank {} of communicator {:#x} (magic {:#x}), not as rank {}",
            addr.ToString(), reply.rank, reply.comm_id, reply.magic, peer.rank));
      }
      if (s.ok())
        return TcpConnection{peer.rank, std::move(fd).value(), addr.ToString(), peer.rail};
      last = s;
      if (deadline.expired()) break;
    }
    if (deadline.expired()) {
      return DeadlineExceeded(
          fmt::format("rank {}: timed out connecting to rank {} at {} (last: {})", self, peer.rank,
                      JoinAddrs(peer.addrs), last.ToString()));
    }
    // Every address failed fast (e.g. refused): pause instead of spinning.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Pending {
  net::Fd fd;
  std::string addr;
  Handshake hs;
  size_t got = 0;
};

// Accepts every new connection queued on the listener.
Status AcceptQueued(int self, int listen_fd, std::vector<Pending>* pending) {
  while (true) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      return ErrnoStatus(fmt::format("rank {}: accept", self), errno);
    }
    Pending p;
    p.fd.reset(fd);
    p.addr = PeerAddress(fd);
    pending->push_back(std::move(p));
  }
}

// Reads more of a pending handshake. Returns false when the connection is finished with
// (dropped, rejected or accepted into `out`).
bool AdvanceHandshake(int self, int size, uint64_t comm_id,
                      const std::vector<PeerRail>& accept_from, std::vector<bool>* connected,
                      Pending* p, std::vector<TcpConnection>* out) {
  ssize_t r = ::recv(p->fd.get(), reinterpret_cast<uint8_t*>(&p->hs) + p->got,
                     sizeof(Handshake) - p->got, MSG_DONTWAIT);
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  if (r <= 0) {
    WEFT_WARN("rank {}: a connection from {} closed before its handshake", self, p->addr);
    return false;
  }
  p->got += static_cast<size_t>(r);
  if (p->got < sizeof(Handshake)) return true;
  std::string problem = HandshakeProblem(p->hs, comm_id, size, accept_from, *connected);
  if (!problem.empty()) {
    WEFT_WARN("rank {}: rejected a connection from {}: {}", self, p->addr, problem);
    return false;
  }
  Handshake reply;
  reply.comm_id = comm_id;
  reply.rank = self;
  reply.size = size;
  reply.rail = p->hs.rail;
  Status s = net::WriteFull(p->fd.get(), &reply, sizeof(reply),
                            Deadline::AfterSeconds(kHandshakeReplySeconds));
  if (!s.ok()) {
    // The connecting rank sees no answer and tries again.
    WEFT_WARN("rank {}: answering rank {} at {} failed: {}", self, p->hs.rank, p->addr,
              s.ToString());
    return false;
  }
  size_t idx = FindPeerRail(accept_from, p->hs.rank, p->hs.rail) - accept_from.begin();
  (*connected)[idx] = true;
  (*out)[idx] = TcpConnection{p->hs.rank, std::move(p->fd), p->addr, p->hs.rail};
  return false;
}

Result<std::vector<TcpConnection>> AcceptAll(int self, int size, uint64_t comm_id, int listen_fd,
                                             const std::vector<PeerRail>& accept_from,
                                             const Deadline& deadline) {
  std::vector<TcpConnection> out(accept_from.size());
  std::vector<bool> connected(accept_from.size(), false);
  std::vector<Pending> pending;
  std::vector<pollfd> pfds;
  while (std::find(connected.begin(), connected.end(), false) != connected.end()) {
    if (deadline.expired()) {
      std::vector<std::string> missing;
      for (size_t i = 0; i < accept_from.size(); ++i) {
        if (connected[i]) continue;
        const PeerRail& p = accept_from[i];
        missing.push_back(p.rail == 0 ? fmt::format("{}", p.rank)
                                      : fmt::format("{} (rail {})", p.rank, p.rail));
      }
      return DeadlineExceeded(fmt::format("rank {}: timed out waiting for rank(s) {} to connect",
                                          self, fmt::join(missing, ", ")));
    }
    // Poll the listener and every half-done handshake together, so one silent client
    // cannot hold up the others.
    pfds.assign(1, pollfd{listen_fd, POLLIN, 0});
    for (const Pending& p : pending) pfds.push_back(pollfd{p.fd.get(), POLLIN, 0});
    int rc = ::poll(pfds.data(), pfds.size(), deadline.RemainingMs());
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(fmt::format("rank {}: poll while accepting", self), errno);
    }
    // Handshakes first (pfds[1..] match `pending` as it was when polled).
    for (size_t i = pending.size(); i-- > 0;) {
      if (pfds[i + 1].revents == 0) continue;
      if (!AdvanceHandshake(self, size, comm_id, accept_from, &connected, &pending[i], &out))
        pending.erase(pending.begin() + static_cast<long>(i));
    }
    if (pfds[0].revents != 0) WEFT_RETURN_IF_ERROR(AcceptQueued(self, listen_fd, &pending));
  }
  return out;
}

}  // namespace

bool IsLoopback(const net::SockAddr& addr) {
  if (addr.family() == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&addr.storage);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.family() == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr.storage);
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  }
  return false;
}

Result<Listener> OpenListener(int rank) {
  WEFT_ASSIGN_OR_RETURN(std::vector<net::Interface> ifs, net::SelectInterfaces());
  bool v4 = std::any_of(ifs.begin(), ifs.end(),
                        [](const net::Interface& i) { return i.addr.family() == AF_INET; });
  int family = v4 ? AF_INET : AF_INET6;
  // The wildcard address serves every interface with one socket; peers learn which
  // addresses to use from the card.
  WEFT_ASSIGN_OR_RETURN(net::SockAddr any, net::SockAddr::FromHostPort(v4 ? "0.0.0.0" : "::", 0));
  Listener l;
  WEFT_ASSIGN_OR_RETURN(l.fd, net::Listen(any));
  WEFT_ASSIGN_OR_RETURN(net::SockAddr bound, net::LocalAddress(l.fd.get()));
  for (const net::Interface& i : ifs) {
    if (i.addr.family() != family || IsLoopback(i.addr)) continue;
    net::SockAddr a = i.addr;
    a.set_port(bound.port());
    l.addrs.push_back(a);
  }
  WEFT_ASSIGN_OR_RETURN(net::SockAddr loop,
                        net::SockAddr::FromHostPort(v4 ? "127.0.0.1" : "::1", bound.port()));
  l.addrs.push_back(loop);
  WEFT_INFO("rank {}: tcp listening on port {}, advertising {}", rank, bound.port(),
            JoinAddrs(l.addrs));
  return l;
}

Result<std::vector<TcpConnection>> ConnectPeers(int self, int size, uint64_t comm_id, int listen_fd,
                                                const std::vector<TcpPeer>& connect_to,
                                                const std::vector<PeerRail>& accept_from,
                                                const Deadline& deadline) {
  std::vector<TcpConnection> out;
  // Lower ranks first: their listeners are already up (opened before the card exchange),
  // and they only wait on ranks lower still, so this order cannot deadlock.
  for (const TcpPeer& peer : connect_to) {
    WEFT_ASSIGN_OR_RETURN(TcpConnection c, ConnectOne(self, size, comm_id, peer, deadline));
    out.push_back(std::move(c));
  }
  if (!accept_from.empty()) {
    WEFT_ASSIGN_OR_RETURN(std::vector<TcpConnection> accepted,
                          AcceptAll(self, size, comm_id, listen_fd, accept_from, deadline));
    for (auto& c : accepted) out.push_back(std::move(c));
  }
  return out;
}

Result<int> KeepAliveFromEnv() {
  WEFT_ASSIGN_OR_RETURN(long long s, GetEnvInt("WEFT_TCP_KEEPALIVE", kDefaultKeepAliveS));
  if (s < 0 || s > 86400)
    return InvalidArgument(fmt::format(
        "WEFT_TCP_KEEPALIVE must be 0 (off) or seconds up to 86400, got {}", s));
  return static_cast<int>(s);
}

KeepAliveTimes KeepAliveTimesFor(int seconds) {
  KeepAliveTimes t;
  t.idle_s = std::max(1, seconds / 2);
  t.interval_s = std::max(1, seconds / 6);
  t.probes = 3;
  return t;
}

namespace {

Status SetKeepAlive(int fd, int seconds) {
  int on = seconds > 0 ? 1 : 0;
  if (::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) != 0)
    return ErrnoStatus("setsockopt(SO_KEEPALIVE)", errno);
  if (!on) return Status::Ok();
  KeepAliveTimes t = KeepAliveTimesFor(seconds);
  const std::pair<int, int> opts[] = {
      {TCP_KEEPIDLE, t.idle_s}, {TCP_KEEPINTVL, t.interval_s}, {TCP_KEEPCNT, t.probes}};
  for (auto [opt, value] : opts)
    if (::setsockopt(fd, IPPROTO_TCP, opt, &value, sizeof(value)) != 0)
      return ErrnoStatus("setsockopt(TCP_KEEP*)", errno);
  return Status::Ok();
}

}  // namespace

Status TuneDataSocket(int fd) {
  WEFT_RETURN_IF_ERROR(net::SetNonBlocking(fd, true));
  WEFT_RETURN_IF_ERROR(net::SetNoDelay(fd));
  WEFT_ASSIGN_OR_RETURN(int keepalive_s, KeepAliveFromEnv());
  WEFT_RETURN_IF_ERROR(SetKeepAlive(fd, keepalive_s));
  // Setting SO_SNDBUF/SO_RCVBUF turns off Linux's buffer autotuning and is capped by
  // net.core.{w,r}mem_max (often only 208 KiB), which would make buffers smaller, not
  // larger. So ask only when the caps allow the full size; otherwise autotuning (up to
  // tcp_rmem/tcp_wmem max, typically 4-6 MiB) does better.
  if (ReadSysctl("/proc/sys/net/core/wmem_max") >= kSocketBufferBytes &&
      ReadSysctl("/proc/sys/net/core/rmem_max") >= kSocketBufferBytes) {
    return net::SetBufferSizes(fd, kSocketBufferBytes);
  }
  return Status::Ok();
}

}  // namespace weft::transport::tcp
