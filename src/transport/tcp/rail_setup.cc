// The tcp part of Mesh::Connect (rail_setup.h).
#include "transport/tcp/rail_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/env.h"
#include "core/log.h"
#include "transport/card.h"
#include "transport/rail_link.h"
#include "transport/tcp/rails.h"
#include "transport/tcp/tcp_link.h"

namespace weft::transport::tcp {
namespace {

// Same-host peers first try loopback; other hosts never get it (it would reach the wrong
// machine), and otherwise the advertised order is kept.
std::vector<net::SockAddr> AddressesToTry(const Card& peer, bool same_host) {
  std::vector<net::SockAddr> out;
  if (same_host)
    for (const auto& a : peer.tcp)
      if (IsLoopback(a)) out.push_back(a);
  for (const auto& a : peer.tcp)
    if (!IsLoopback(a)) out.push_back(a);
  return out;
}

std::vector<net::SockAddr> Routable(const std::vector<net::SockAddr>& addrs) {
  std::vector<net::SockAddr> out;
  for (const auto& a : addrs)
    if (!IsLoopback(a)) out.push_back(a);
  return out;
}

// This rank's rail offer for its card (multi-rail, rails.h).
Status SetRails(Card* mine) {
  Result<int> wanted = RailsWantedFromEnv();
  if (!wanted.ok()) return wanted.status().WithContext(fmt::format("rank {}", mine->rank));
  Result<uint64_t> stripe_min = StripeMinFromEnv();
  if (!stripe_min.ok()) return stripe_min.status().WithContext(fmt::format("rank {}", mine->rank));
  mine->tcp_rails = LocalRailCount(wanted.value(), GetEnv("WEFT_SOCKET_IFNAME").value_or(""),
                                   Routable(mine->tcp).size());
  mine->stripe_min = stripe_min.value();
  return Status::Ok();
}

// The tcp link to one peer from its connections (one per rail, indexed by rail);
// `keepalive_s`: WEFT_TCP_KEEPALIVE (KeepAliveFromEnv).
Result<std::unique_ptr<Link>> MakeTcpLink(int self, int peer, std::vector<TcpConnection> conns,
                                          uint64_t stripe_min, int keepalive_s) {
  std::vector<std::unique_ptr<Link>> rails;
  for (TcpConnection& c : conns) {
    std::string what = conns.size() == 1 ? fmt::format("rank {}: socket to rank {}", self, peer)
                                         : fmt::format("rank {}: socket of rail {} to rank {}",
                                                       self, c.rail, peer);
    WEFT_RETURN_IF_ERROR(TuneDataSocket(c.fd.get(), keepalive_s).WithContext(what));
    rails.push_back(
        std::make_unique<TcpLink>(self, peer, std::move(c.fd), std::move(c.addr), keepalive_s));
  }
  if (rails.size() == 1) return std::unique_ptr<Link>(std::move(rails[0]));
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<RailLink> link,
                        RailLink::Create(self, peer, std::move(rails), stripe_min));
  return std::unique_ptr<Link>(std::move(link));
}

// A rail that reached the peer at another of its addresses than that rail's still works,
// but shares a path with another rail, so striping over it gains nothing: say so.
void WarnIfOffRail(int self, const TcpConnection& c, const Card& peer) {
  std::vector<net::SockAddr> peer_rails = Routable(peer.tcp);
  std::string want =
      static_cast<size_t>(c.rail) < peer_rails.size() ? peer_rails[c.rail].ToString() : "";
  if (c.addr != want)
    WEFT_WARN(
        "rank {}: tcp rail {} to rank {} connected to {}, not to that rail's {}: two "
        "rails share a path (check the routes of WEFT_SOCKET_IFNAME's interfaces)",
        self, c.rail, c.rank, c.addr, want);
}

// Adds the local address of a connection to another host to `sources`, once.
void NoteRemoteSource(int fd, std::vector<net::SockAddr>* sources) {
  // Which interface a connection leaves by is the routing table's choice, so ask the
  // socket rather than predict it from the advertised addresses. A socket that cannot
  // say is left out (it is about to fail its first transfer anyway).
  Result<net::SockAddr> local = net::LocalAddress(fd);
  if (!local.ok()) return;
  local->set_port(0);
  const std::string text = local->ToString();
  for (const net::SockAddr& a : *sources)
    if (a.ToString() == text) return;
  sources->push_back(local.value());
}

}  // namespace

Status RailSetup::Listen(Card* mine) {
  Result<Listener> l = OpenListener(mine->rank);
  if (!l.ok()) return l.status().WithContext(fmt::format("rank {}: tcp listener", mine->rank));
  listener_ = std::move(l).value();
  mine->tcp = listener_.addrs;
  return SetRails(mine);
}

void RailSetup::AddPeer(const Card& mine, const Card& peer) {
  const int r = peer.rank;
  const bool same_host = peer.host_id == mine.host_id;
  pair_rails_.resize(mine.size, 0);
  // Rail 0 tries every address as a single rail does; rail k its peer's rail k first.
  pair_rails_[r] = PairRails(same_host, mine.tcp_rails, peer.tcp_rails);
  for (int k = 0; k < pair_rails_[r]; ++k) {
    if (r > mine.rank) {
      accept_from_.push_back(PeerRail{r, k});
    } else if (k == 0) {
      connect_to_.push_back(TcpPeer{r, AddressesToTry(peer, same_host), 0});
    } else {
      connect_to_.push_back(TcpPeer{r, RailAddresses(Routable(peer.tcp), k), k});
    }
  }
}

int RailSetup::peer_count() const {
  return static_cast<int>(
      std::count_if(pair_rails_.begin(), pair_rails_.end(), [](int n) { return n > 0; }));
}

Status RailSetup::Connect(const net::AuthKey& key, const Deadline& deadline, const Card& mine,
                          const std::vector<Card>& cards, std::vector<std::unique_ptr<Link>>* links,
                          std::vector<net::SockAddr>* remote_sources) {
  if (connect_to_.empty() && accept_from_.empty()) return Status::Ok();
  const int self = mine.rank;
  WEFT_ASSIGN_OR_RETURN(std::vector<TcpConnection> conns,
                        ConnectPeers(self, mine.size, mine.comm_id, key, listener_.raw_fds(),
                                     connect_to_, accept_from_, deadline));
  // Read once for every tcp link of the mesh (their sockets' keep-alive and stall bound).
  Result<int> keepalive_s = KeepAliveFromEnv();
  if (!keepalive_s.ok()) return keepalive_s.status().WithContext(fmt::format("rank {}", self));
  std::vector<std::vector<TcpConnection>> by_peer(mine.size);
  for (TcpConnection& c : conns) {
    if (pair_rails_[c.rank] > 1 && c.rank < self) WarnIfOffRail(self, c, cards[c.rank]);
    if (cards[c.rank].host_id != mine.host_id) NoteRemoteSource(c.fd.get(), remote_sources);
    by_peer[c.rank].resize(pair_rails_[c.rank]);
    by_peer[c.rank][c.rail] = std::move(c);
  }
  for (int r = 0; r < mine.size; ++r) {
    if (by_peer[r].empty()) continue;
    uint64_t stripe_min = std::max(mine.stripe_min, cards[r].stripe_min);
    if (pair_rails_[r] > 1)
      WEFT_INFO("rank {}: {} tcp rails to rank {}, messages of {} bytes or more striped", self,
                pair_rails_[r], r, stripe_min);
    WEFT_ASSIGN_OR_RETURN(
        (*links)[r], MakeTcpLink(self, r, std::move(by_peer[r]), stripe_min, keepalive_s.value()));
  }
  return Status::Ok();
}

}  // namespace weft::transport::tcp
