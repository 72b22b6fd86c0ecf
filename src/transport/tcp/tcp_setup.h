// Setting up the TCP connections of a mesh. Each rank listens on one port, on each
// address it advertises (the selected interfaces and loopback, never the wildcard
// address), before the cards are exchanged, so that by the time a peer knows the address
// the listener is already up. Then rank i
// connects to every tcp peer j < i and accepts from every tcp peer j > i.
//
// Handshake (on every new connection, before any data): first authentication
// (net/auth.h, role "data", bound to the communicator id and the connecting rank): both
// sides prove they hold the job's key. Then the connecting rank sends {magic, version,
// rail, comm_id, rank, size}; the acceptor checks it (the rank must be the one that
// authenticated), routes the socket to that rank's rail and answers with the same record
// carrying its own rank. Connections that fail either step (no or wrong key, garbage,
// a replay, foreign magic, other communicator, rank out of range or not expected,
// duplicate) or stay silent past net::kAuthHandshakeSeconds are closed with a WARN
// naming the remote address and the reason, and accepting goes on until the deadline;
// the acceptor polls every pending connection, so none can stall the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/auth.h"
#include "net/socket.h"

namespace weft::transport::tcp {

struct Listener {
  std::vector<net::Fd> fds;          // one listening socket per advertised address
  std::vector<net::SockAddr> addrs;  // the addresses to advertise, port filled in
  std::vector<int> raw_fds() const;
};

// Listens on the addresses it advertises, and only those: every selected interface's
// address of the chosen family (IPv4 if any selected interface is IPv4, else IPv6),
// then loopback (used by peers on the same host) — one socket per address, all on one
// port. Interfaces that WEFT_SOCKET_IFNAME leaves out are never listened on.
Result<Listener> OpenListener(int rank);

// True for 127.0.0.0/8 and ::1.
bool IsLoopback(const net::SockAddr& addr);

struct TcpPeer {
  int rank = 0;
  std::vector<net::SockAddr> addrs;  // tried in order (connect side only)
  int rail = 0;  // which of the pair's connections (multi-rail, rails.h); sent in the handshake
};

// One connection expected from a peer: its rank and rail.
struct PeerRail {
  int rank = 0;
  int rail = 0;
};

struct TcpConnection {
  int rank = -1;
  net::Fd fd;
  std::string addr;  // the peer's address, for error messages
  int rail = 0;
};

// Connects to every peer rail in `connect_to` (all of lower rank), then accepts one
// connection for every entry of `accept_from` (all of higher rank) on `listen_fd`.
// Returns the connections in the order connect_to then accept_from. Bounded by
// `deadline`; errors name this rank, the peer and the addresses tried.
// Every connection authenticates with `key` first.
Result<std::vector<TcpConnection>> ConnectPeers(int self, int size, uint64_t comm_id,
                                                const net::AuthKey& key,
                                                const std::vector<int>& listen_fds,
                                                const std::vector<TcpPeer>& connect_to,
                                                const std::vector<PeerRail>& accept_from,
                                                const Deadline& deadline);

// Socket settings for a data connection: non-blocking, TCP_NODELAY, large kernel
// buffers where the system allows them, and TCP keep-alive after `keepalive_s` seconds
// (KeepAliveFromEnv, read once per mesh; 0: off).
Status TuneDataSocket(int fd, int keepalive_s);

// WEFT_TCP_KEEPALIVE: seconds of silence after which a peer whose host vanished (no FIN,
// no RST: power loss, cable, partition) is declared dead; default kDefaultKeepAliveS,
// 0 turns keep-alive off. The kernel probes an idle connection after half of it, then
// three times more at a sixth of it each (see KeepAliveTimes); a probe is only sent
// while nothing else crosses the connection, so a busy link pays nothing. A pending or
// later read or write then fails with "connection timed out".
inline constexpr int kDefaultKeepAliveS = 10;
Result<int> KeepAliveFromEnv();
struct KeepAliveTimes {
  int idle_s, interval_s, probes;
};
KeepAliveTimes KeepAliveTimesFor(int seconds);  // seconds > 0

}  // namespace weft::transport::tcp
