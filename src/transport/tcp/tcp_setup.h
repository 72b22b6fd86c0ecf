// Setting up the TCP connections of a mesh. Each rank listens on one port (wildcard
// address, so every selected interface reaches it) before the cards are exchanged, so
// that by the time a peer knows the address the listener is already up. Then rank i
// connects to every tcp peer j < i and accepts from every tcp peer j > i.
//
// Handshake (on every new connection, before any data): the connecting rank sends
// {magic, version, rail, comm_id, rank, size}; the acceptor checks it, routes the socket
// to that rank's rail and answers with the same record carrying its own rank. Connections that
// fail the check (foreign magic, other communicator, rank out of range or not expected,
// duplicate) are closed with a WARN, and accepting goes on until the deadline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/socket.h"

namespace weft::transport::tcp {

struct Listener {
  net::Fd fd;
  std::vector<net::SockAddr> addrs;  // the addresses to advertise, port filled in
};

// Listens on the wildcard address of the family of the selected interfaces (IPv4 if any
// is IPv4, else IPv6) and returns the addresses to advertise: every selected interface's
// address, then loopback (used by peers on the same host).
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
Result<std::vector<TcpConnection>> ConnectPeers(int self, int size, uint64_t comm_id, int listen_fd,
                                                const std::vector<TcpPeer>& connect_to,
                                                const std::vector<PeerRail>& accept_from,
                                                const Deadline& deadline);

// Socket settings for a data connection: non-blocking, TCP_NODELAY, large kernel
// buffers where the system allows them, and TCP keep-alive (KeepAliveFromEnv).
Status TuneDataSocket(int fd);

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
