// StoreServer: one background thread, poll(2) over the listener, an eventfd (for
// shutdown) and every client connection. All sockets are non-blocking; each connection
// has an input buffer (parsed by store_protocol) and an output buffer (flushed when
// writable). Requests from one connection are handled in order: a Get for an absent key
// parks the connection until a Set or Add answers it, so no thread ever blocks.
// A new connection first runs the authentication handshake (net::AuthServer, fed from
// the same input buffer); until it is done nothing it sends is parsed as a request, and
// one that has not finished by its deadline is closed.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "bootstrap/store_table.h"
#include "core/log.h"
#include "net/wait.h"

namespace weft::bootstrap {
namespace {

constexpr size_t kReadChunk = 256 << 10;

struct Conn {
  Conn(const net::AuthKey& key)
      : auth(key, net::AuthRole::kStore, 0),
        auth_deadline(Deadline::AfterSeconds(net::kAuthHandshakeSeconds)) {}
  net::Fd fd;
  std::string peer;
  net::AuthServer auth;
  Deadline auth_deadline;  // only while !auth.done()
  std::string in;
  size_t in_pos = 0;  // bytes of `in` already parsed
  std::string out;
  size_t out_pos = 0;  // bytes of `out` already sent
  bool parked = false;
  bool dead = false;
};

}  // namespace

struct StoreServer::Impl {
  net::Fd listener;
  net::Fd wake;  // eventfd: the destructor writes it to stop the thread
  net::SockAddr addr;
  net::AuthKey key;
  std::thread thread;

  // Owned by the server thread once it runs.
  StoreTable table;
  std::map<uint64_t, Conn> conns;
  uint64_t next_id = 1;
  std::chrono::steady_clock::time_point accept_paused_until{};

  void Run();
  void AcceptAll();
  void ReadSome(Conn& c);
  void Process(uint64_t id, std::vector<uint64_t>* ready);
  // Runs the handshake on what `c` sent; false while it is not authenticated yet.
  bool Authenticate(Conn& c);
  // Closes connections whose handshake is past its deadline; returns the poll timeout
  // (ms) until the next such deadline, or -1 when none is pending.
  int ExpireHandshakes();
  void EraseDead();
  void Flush(Conn& c);
  void Drop(Conn& c, const std::string& why, bool warn);
};

void StoreServer::Impl::Drop(Conn& c, const std::string& why, bool warn) {
  if (c.dead) return;
  if (!c.auth.done() && !warn) {
    // A client that goes away mid-handshake is a stray or a client with another key
    // (it closes when our challenge does not prove its key): worth a warning.
    c.dead = true;
    WEFT_WARN("store {}: connection from {} ended before authenticating ({}; {} bytes received)",
              addr.ToString(), c.peer, why, c.in.size());
    return;
  }
  if (warn) {
    WEFT_WARN("store {}: closing connection from {}: {}", addr.ToString(), c.peer, why);
  } else {
    WEFT_TRACE("store {}: connection from {} closed: {}", addr.ToString(), c.peer, why);
  }
  c.dead = true;
}

void StoreServer::Impl::AcceptAll() {
  for (;;) {
    int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      // EMFILE/ENFILE/ENOBUFS: the pending connection stays queued; stop polling the
      // listener briefly instead of spinning on it.
      WEFT_WARN("store {}: {}", addr.ToString(), ErrnoStatus("accept", err).message());
      accept_paused_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      return;
    }
    Conn c(key);
    c.fd.reset(fd);
    (void)net::SetNoDelay(fd);  // best effort: latency only
    c.peer = net::PeerName(fd);
    conns.emplace(next_id++, std::move(c));
  }
}

void StoreServer::Impl::ReadSome(Conn& c) {
  // One chunk per wakeup: poll is level-triggered, so a busy client cannot starve others.
  size_t old = c.in.size();
  c.in.resize(old + kReadChunk);
  ssize_t r;
  do {
    r = ::recv(c.fd.get(), c.in.data() + old, kReadChunk, MSG_DONTWAIT);
  } while (r < 0 && errno == EINTR);
  int err = errno;
  c.in.resize(old + (r > 0 ? static_cast<size_t>(r) : 0));
  if (r == 0) return Drop(c, "peer closed", false);
  if (r < 0 && err != EAGAIN && err != EWOULDBLOCK)
    return Drop(c, ErrnoStatus("recv", err).message(), false);
}

bool StoreServer::Impl::Authenticate(Conn& c) {
  if (c.auth.done()) return true;
  auto used = c.auth.Feed(std::string_view(c.in).substr(c.in_pos), &c.out);
  if (used.ok()) c.in_pos += used.value();
  Flush(c);  // the challenge, or the verdict (also a rejecting one, best effort)
  if (!used.ok()) {
    Drop(c, "rejected an unauthenticated connection: " + used.status().message(), true);
    return false;
  }
  if (c.auth.done()) WEFT_TRACE("store {}: {} authenticated", addr.ToString(), c.peer);
  return c.auth.done();
}

int StoreServer::Impl::ExpireHandshakes() {
  int timeout_ms = -1;
  for (auto& [id, c] : conns) {
    if (c.dead || c.auth.done()) continue;
    if (c.auth_deadline.expired()) {
      Drop(c,
           fmt::format("rejected an unauthenticated connection: no complete handshake within "
                       "{} s ({} bytes received)",
                       net::kAuthHandshakeSeconds, c.in.size()),
           true);
      continue;
    }
    int ms = c.auth_deadline.RemainingMs();
    if (timeout_ms < 0 || ms < timeout_ms) timeout_ms = ms;
  }
  return timeout_ms;
}

void StoreServer::Impl::Process(uint64_t id, std::vector<uint64_t>* ready) {
  Conn& c = conns.at(id);
  if (!Authenticate(c)) return;
  std::vector<StoreTable::Delivery> out;
  while (!c.parked && !c.dead) {
    auto parsed = ParseRequest(std::string_view(c.in).substr(c.in_pos), kMaxFrame);
    if (!parsed.ok()) return Drop(c, parsed.status().message(), true);
    if (parsed->consumed == 0) break;
    c.in_pos += parsed->consumed;
    c.parked = table.Apply(id, parsed->request, &out);
  }
  // Release parsed bytes; a partial frame moves to the front.
  if (c.in_pos == c.in.size()) {
    c.in.clear();
    c.in_pos = 0;
  } else if (c.in_pos > (1u << 20)) {
    c.in.erase(0, c.in_pos);
    c.in_pos = 0;
  }
  for (auto& d : out) {
    auto it = conns.find(d.conn);
    if (it == conns.end() || it->second.dead) continue;
    Conn& to = it->second;
    to.out += d.reply;
    Flush(to);
    if (d.conn != id && to.parked) {
      // Its Get is answered: it may have pipelined more requests behind it.
      to.parked = false;
      ready->push_back(d.conn);
    }
  }
}

void StoreServer::Impl::Flush(Conn& c) {
  while (c.out_pos < c.out.size()) {
    ssize_t w = ::send(c.fd.get(), c.out.data() + c.out_pos, c.out.size() - c.out_pos,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      c.out_pos += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // POLLOUT will resume
    return Drop(c, ErrnoStatus("send", errno).message(), false);
  }
  c.out.clear();
  c.out_pos = 0;
}

void StoreServer::Impl::Run() {
  std::vector<pollfd> pfds;
  std::vector<uint64_t> ids;  // ids[i] is the connection of pfds[i + 2]
  for (;;) {
    int timeout_ms = ExpireHandshakes();
    EraseDead();
    pfds.clear();
    ids.clear();
    pfds.push_back({wake.get(), POLLIN, 0});
    auto now = std::chrono::steady_clock::now();
    bool accepting = now >= accept_paused_until;
    pfds.push_back({accepting ? listener.get() : -1, POLLIN, 0});
    for (auto& [id, c] : conns) {
      // A parked connection is not read (its next request must wait its turn), but
      // POLLRDHUP still tells us when it goes away so its Get can be forgotten.
      short ev = c.parked ? POLLRDHUP : (POLLIN | POLLRDHUP);
      if (c.out_pos < c.out.size()) ev |= POLLOUT;
      pfds.push_back({c.fd.get(), ev, 0});
      ids.push_back(id);
    }
    if (!accepting && (timeout_ms < 0 || timeout_ms > 100)) timeout_ms = 100;
    int rc = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      WEFT_WARN("store {}: {}; server stopping", addr.ToString(),
                ErrnoStatus("poll", errno).message());
      return;
    }
    if (pfds[0].revents) return;  // shutdown
    if (pfds[1].revents) AcceptAll();

    std::vector<uint64_t> ready;
    for (size_t i = 0; i < ids.size(); ++i) {
      short re = pfds[i + 2].revents;
      if (re == 0) continue;
      Conn& c = conns.at(ids[i]);
      if (c.dead) continue;
      if (re & POLLOUT) Flush(c);
      if (c.parked) {
        if (re & (POLLRDHUP | POLLHUP | POLLERR)) Drop(c, "peer closed while waiting", false);
        continue;
      }
      if (re & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
        ReadSome(c);
        ready.push_back(ids[i]);
      }
    }
    // Handling a request can answer parked Gets, whose connections may then have more.
    while (!ready.empty()) {
      uint64_t id = ready.back();
      ready.pop_back();
      auto it = conns.find(id);
      if (it != conns.end() && !it->second.dead) Process(id, &ready);
    }
    EraseDead();
  }
}

void StoreServer::Impl::EraseDead() {
  for (auto it = conns.begin(); it != conns.end();) {
    if (it->second.dead) {
      table.Forget(it->first);
      it = conns.erase(it);
    } else {
      ++it;
    }
  }
}

Result<std::unique_ptr<StoreServer>> StoreServer::Start(const net::SockAddr& addr,
                                                        const net::AuthKey& key) {
  auto impl = std::make_unique<Impl>();
  impl->key = key;
  WEFT_ASSIGN_OR_RETURN(impl->listener, net::Listen(addr));
  WEFT_ASSIGN_OR_RETURN(impl->addr, net::LocalAddress(impl->listener.get()));
  impl->wake.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->wake.valid()) return ErrnoStatus("store: eventfd", errno);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Run(); });
  WEFT_INFO("store serving on {}", impl->addr.ToString());
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(impl)));
}

StoreServer::StoreServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StoreServer::~StoreServer() {
  uint64_t one = 1;
  ssize_t w;
  do {
    w = ::write(impl_->wake.get(), &one, sizeof(one));
  } while (w < 0 && errno == EINTR);
  impl_->thread.join();
  // impl_'s destructor closes every connection: waiting clients see EOF, not a hang.
}

const net::SockAddr& StoreServer::address() const { return impl_->addr; }

}  // namespace weft::bootstrap
