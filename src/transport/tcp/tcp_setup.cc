#include "transport/tcp/tcp_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
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

Result<TcpConnection> ConnectOne(int self, int size, uint64_t comm_id, const net::AuthKey& key,
                                 const TcpPeer& peer, const Deadline& deadline) {
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
      Status s = net::Authenticate(fd->get(), key, net::AuthRole::kData, self, comm_id,
                                   fmt::format("rank {} at {}", peer.rank, addr.ToString()),
                                   deadline);
      if (s.ok()) s = net::WriteFull(fd->get(), &mine, sizeof(mine), deadline);
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
  Pending(const net::AuthKey& key, uint64_t comm_id)
      : auth(key, net::AuthRole::kData, comm_id),
        auth_deadline(Deadline::AfterSeconds(net::kAuthHandshakeSeconds)) {}
  net::Fd fd;
  std::string addr;
  net::AuthServer auth;
  Deadline auth_deadline;  // for the authentication and the data handshake
  std::string in;          // received, not yet consumed
};

// Accepts every new connection queued on the listener.
Status AcceptQueued(int self, int listen_fd, const net::AuthKey& key, uint64_t comm_id,
                    std::vector<Pending>* pending) {
  while (true) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      return ErrnoStatus(fmt::format("rank {}: accept", self), errno);
    }
    Pending p(key, comm_id);
    p.fd.reset(fd);
    p.addr = PeerAddress(fd);
    pending->push_back(std::move(p));
  }
}

// Reads more of a pending connection: authentication first, then the data handshake.
// Returns false when the connection is finished with (dropped, rejected or accepted
// into `out`).
bool AdvanceHandshake(int self, int size, uint64_t comm_id,
                      const std::vector<PeerRail>& accept_from, std::vector<bool>* connected,
                      Pending* p, std::vector<TcpConnection>* out) {
  char buf[256];
  ssize_t r = ::recv(p->fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
  if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  if (r <= 0) {
    WEFT_WARN("rank {}: a connection from {} closed before its handshake ({} bytes received)",
              self, p->addr, p->in.size());
    return false;
  }
  p->in.append(buf, static_cast<size_t>(r));
  auto reject = [&](const std::string& why) {
    WEFT_WARN("rank {}: rejected a connection from {}: {}", self, p->addr, why);
    return false;
  };
  auto send = [&](const std::string& bytes) {
    return net::WriteFull(p->fd.get(), bytes.data(), bytes.size(),
                          Deadline::AfterSeconds(kHandshakeReplySeconds));
  };
  if (!p->auth.done()) {
    std::string answer;
    auto used = p->auth.Feed(p->in, &answer);
    if (!answer.empty()) {
      Status s = send(answer);
      if (!s.ok() && used.ok()) return reject("answering its handshake failed: " + s.ToString());
    }
    if (!used.ok()) return reject("not authenticated: " + used.status().message());
    p->in.erase(0, used.value());
    if (!p->auth.done()) return true;
  }
  if (p->in.size() < sizeof(Handshake)) return true;
  Handshake hs;
  std::memcpy(&hs, p->in.data(), sizeof(hs));
  if (p->in.size() > sizeof(Handshake))
    return reject("it sent data before the handshake was answered");
  std::string problem = HandshakeProblem(hs, comm_id, size, accept_from, *connected);
  if (problem.empty() && hs.rank != p->auth.hello().rank)
    problem = fmt::format("it authenticated as rank {} but claims rank {}", p->auth.hello().rank,
                          hs.rank);
  if (!problem.empty()) return reject(problem);
  Handshake reply;
  reply.comm_id = comm_id;
  reply.rank = self;
  reply.size = size;
  reply.rail = hs.rail;
  Status s = net::WriteFull(p->fd.get(), &reply, sizeof(reply),
                            Deadline::AfterSeconds(kHandshakeReplySeconds));
  if (!s.ok()) {
    // The connecting rank sees no answer and tries again.
    WEFT_WARN("rank {}: answering rank {} at {} failed: {}", self, hs.rank, p->addr,
              s.ToString());
    return false;
  }
  size_t idx = FindPeerRail(accept_from, hs.rank, hs.rail) - accept_from.begin();
  (*connected)[idx] = true;
  (*out)[idx] = TcpConnection{hs.rank, std::move(p->fd), p->addr, hs.rail};
  return false;
}

Result<std::vector<TcpConnection>> AcceptAll(int self, int size, uint64_t comm_id,
                                             const net::AuthKey& key,
                                             const std::vector<int>& listen_fds,
                                             const std::vector<PeerRail>& accept_from,
                                             const Deadline& deadline) {
  std::vector<TcpConnection> out(accept_from.size());
  std::vector<bool> connected(accept_from.size(), false);
  std::vector<Pending> pending;
  std::vector<pollfd> pfds;
  const size_t nl = listen_fds.size();
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
    // A connection that has not finished its handshakes in time is a silent or stalled
    // client, not a rank (ranks answer at once): close it.
    int timeout_ms = deadline.RemainingMs();
    for (size_t i = pending.size(); i-- > 0;) {
      if (pending[i].auth_deadline.expired()) {
        WEFT_WARN("rank {}: rejected a connection from {}: no complete handshake within {} s "
                  "({} bytes received)",
                  self, pending[i].addr, net::kAuthHandshakeSeconds, pending[i].in.size());
        pending.erase(pending.begin() + static_cast<long>(i));
        continue;
      }
      timeout_ms = std::min(timeout_ms, pending[i].auth_deadline.RemainingMs());
    }
    // Poll the listeners and every half-done handshake together, so one silent client
    // cannot hold up the others.
    pfds.clear();
    for (int fd : listen_fds) pfds.push_back(pollfd{fd, POLLIN, 0});
    for (const Pending& p : pending) pfds.push_back(pollfd{p.fd.get(), POLLIN, 0});
    int rc = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(fmt::format("rank {}: poll while accepting", self), errno);
    }
    // Handshakes first (pfds[nl..] match `pending` as it was when polled).
    for (size_t i = pending.size(); i-- > 0;) {
      if (pfds[i + nl].revents == 0) continue;
      if (!AdvanceHandshake(self, size, comm_id, accept_from, &connected, &pending[i], &out))
        pending.erase(pending.begin() + static_cast<long>(i));
    }
    for (size_t l = 0; l < nl; ++l)
      if (pfds[l].revents != 0)
        WEFT_RETURN_IF_ERROR(AcceptQueued(self, listen_fds[l], key, comm_id, &pending));
  }
  for (const Pending& p : pending)
    WEFT_WARN("rank {}: closed an unfinished connection from {}: every rank is connected", self,
              p.addr);
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

std::vector<int> Listener::raw_fds() const {
  std::vector<int> out;
  for (const net::Fd& fd : fds) out.push_back(fd.get());
  return out;
}

Result<Listener> OpenListener(int rank) {
  WEFT_ASSIGN_OR_RETURN(std::vector<net::Interface> ifs, net::SelectInterfaces());
  bool v4 = std::any_of(ifs.begin(), ifs.end(),
                        [](const net::Interface& i) { return i.addr.family() == AF_INET; });
  int family = v4 ? AF_INET : AF_INET6;
  // One socket per advertised address rather than one on the wildcard address: an
  // interface WEFT_SOCKET_IFNAME leaves out (a public one, say) accepts nothing.
  std::vector<net::SockAddr> wanted;
  for (const net::Interface& i : ifs)
    if (i.addr.family() == family && !IsLoopback(i.addr) &&
        std::none_of(wanted.begin(), wanted.end(),
                     [&](const net::SockAddr& w) { return w.ToString() == i.addr.ToString(); }))
      wanted.push_back(i.addr);
  WEFT_ASSIGN_OR_RETURN(net::SockAddr loop,
                        net::SockAddr::FromHostPort(v4 ? "127.0.0.1" : "::1", 0));
  wanted.push_back(loop);
  // The first socket picks a free port; the others must get the same one (the card
  // carries one port per address, but one port is easier to read in logs and firewalls).
  // Another process may hold that port on another address, so try a few.
  Status last;
  for (int attempt = 0; attempt < 16; ++attempt) {
    Listener l;
    uint16_t port = 0;
    for (net::SockAddr a : wanted) {
      a.set_port(port);
      Result<net::Fd> fd = net::Listen(a);
      if (!fd.ok()) {
        last = fd.status().WithContext("listening on " + a.ToString());
        break;
      }
      if (port == 0) {
        WEFT_ASSIGN_OR_RETURN(net::SockAddr bound, net::LocalAddress(fd->get()));
        port = bound.port();
        a.set_port(port);
      }
      l.fds.push_back(std::move(fd).value());
      l.addrs.push_back(a);
    }
    if (l.addrs.size() == wanted.size()) {
      WEFT_INFO("rank {}: tcp listening on port {} of {}", rank, port, JoinAddrs(l.addrs));
      return l;
    }
  }
  return last;
}

Result<std::vector<TcpConnection>> ConnectPeers(int self, int size, uint64_t comm_id,
                                                const net::AuthKey& key,
                                                const std::vector<int>& listen_fds,
                                                const std::vector<TcpPeer>& connect_to,
                                                const std::vector<PeerRail>& accept_from,
                                                const Deadline& deadline) {
  std::vector<TcpConnection> out;
  // Lower ranks first: their listeners are already up (opened before the card exchange),
  // and they only wait on ranks lower still, so this order cannot deadlock.
  for (const TcpPeer& peer : connect_to) {
    WEFT_ASSIGN_OR_RETURN(TcpConnection c, ConnectOne(self, size, comm_id, key, peer, deadline));
    out.push_back(std::move(c));
  }
  if (!accept_from.empty()) {
    WEFT_ASSIGN_OR_RETURN(std::vector<TcpConnection> accepted,
                          AcceptAll(self, size, comm_id, key, listen_fds, accept_from, deadline));
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

Status TuneDataSocket(int fd, int keepalive_s) {
  WEFT_RETURN_IF_ERROR(net::SetNonBlocking(fd, true));
  WEFT_RETURN_IF_ERROR(net::SetNoDelay(fd));
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
