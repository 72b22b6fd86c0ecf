// Mesh::Connect: exchange cards, choose a transport per peer, set up shm then tcp, and
// remember which links reach other hosts (Mesh::UsedLinks).
#include "transport/mesh.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/env.h"
#include "core/log.h"
#include "net/link_speed.h"
#include "transport/card.h"
#include "transport/rail_link.h"
#include "transport/shm/shm_setup.h"
#include "transport/tcp/rails.h"
#include "transport/tcp/tcp_link.h"
#include "transport/tcp/tcp_setup.h"
#ifdef WEFT_HAVE_OFI
#include "transport/ofi/nic_choice.h"
#include "transport/ofi/ofi_link.h"
#endif

namespace weft::transport {
namespace {

Status CheckOptions(const MeshOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size)
    return InvalidArgument(
        fmt::format("Mesh::Connect: rank {} is not in a world of size {}", o.rank, o.size));
  return Status::Ok();
}

// Decodes every card and checks that they describe one consistent communicator, whose
// ranks all run the same transports (`mine`: this rank's card).
Result<std::vector<Card>> DecodeCards(const MeshOptions& o, const Card& mine,
                                      const std::vector<std::string>& raw) {
  if (static_cast<int>(raw.size()) != o.size)
    return Internal(fmt::format("rank {}: card exchange returned {} cards for {} ranks", o.rank,
                                raw.size(), o.size));
  std::vector<Card> cards;
  for (int r = 0; r < o.size; ++r) {
    Result<Card> c = DecodeCard(raw[r]);
    if (!c.ok())
      return c.status().WithContext(fmt::format("rank {}: card from rank {}", o.rank, r));
    if (c->rank != r || c->size != o.size || c->comm_id != o.comm_id) {
      return InvalidUsage(fmt::format(
          "rank {}: the card at index {} is from rank {} of {} (comm {:#x}); expected rank {} of "
          "{} (comm {:#x})",
          o.rank, r, c->rank, c->size, c->comm_id, r, o.size, o.comm_id));
    }
    if (c->mode != mine.mode || ResolvedMode(c.value()) != ResolvedMode(mine)) {
      // Ranks choosing different transports for one pair would wait for each other on
      // different paths until the deadline; say so now instead. With auto, ranks differ
      // when some found a fabric and others did not (a node without the EFA software).
      return InvalidUsage(fmt::format("rank {} uses WEFT_TRANSPORT={} but rank {} uses {}", o.rank,
                                      DescribeMode(mine), r, DescribeMode(c.value())));
    }
    cards.push_back(std::move(c).value());
  }
  return cards;
}

// Whether the pair of this rank and a peer runs over ofi in `mode` (resolved).
bool UsesOfi(TransportMode mode, bool same_host) {
  return mode == TransportMode::kOfi || (mode == TransportMode::kShmOfi && !same_host);
}

// The endpoints this rank's ofi links use, one per rail (WEFT_OFI_NRAILS), or none.
using Endpoints = std::vector<std::shared_ptr<ofi::OfiEndpoint>>;

#ifdef WEFT_HAVE_OFI
// ofi messages from this size on are striped over a pair's rails. A constant, because
// both ends must cut alike; tcp's default (WEFT_TCP_STRIPE_MIN), for the same reason:
// below it a stripe's message costs more than the second path gives.
constexpr uint64_t kOfiStripeMin = tcp::kDefaultStripeMin;

// WEFT_OFI_NRAILS: endpoints (NICs) per rank that each pair stripes over, 1..kMaxRails;
// "auto" (the default): the host's domains shared among its local ranks (AutoOfiRails).
Result<int> OfiRails(const MeshOptions& o, const ofi::ProviderOffer& offer) {
  Result<int> wanted = ParseRailCount("WEFT_OFI_NRAILS", GetEnv("WEFT_OFI_NRAILS").value_or(""));
  if (!wanted.ok()) return wanted.status().WithContext(fmt::format("rank {}", o.rank));
  if (wanted.value() > 0) return wanted.value();
  const int domains = offer.domain_count();
  const int rails = ofi::AutoOfiRails(domains, o.local_size, kMaxRails);
  WEFT_INFO("rank {}: WEFT_OFI_NRAILS=auto: {} rail{} ({} domain{}, {} local rank{})", o.rank,
            rails, rails == 1 ? "" : "s", domains, domains == 1 ? "" : "s",
            o.local_size > 0 ? std::to_string(o.local_size) : "unknown",
            o.local_size == 1 ? "" : "s");
  return rails;
}

// Rail k of the rank with local index i opens its endpoint on domain slot i*R + k (mod
// the domains: ofi::ChooseDomain), so the local ranks' rails cover the NICs in turn.
Result<Endpoints> OpenRails(const MeshOptions& o, const ofi::OpenOptions& eo) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const ofi::ProviderOffer> offer,
                        ofi::ProviderOffer::Find(o.rank, eo));
  WEFT_ASSIGN_OR_RETURN(int rails, OfiRails(o, *offer));
  const int local = o.local_index >= 0 ? o.local_index : o.rank;
  Endpoints out;
  for (int k = 0; k < rails; ++k) {
    Result<std::shared_ptr<ofi::OfiEndpoint>> e =
        ofi::OfiEndpoint::Open(o.rank, *offer, local * rails + k);
    if (!e.ok())
      return rails == 1 ? e.status()
                        : e.status().WithContext(fmt::format("rail {} of {}", k, rails));
    out.push_back(std::move(e).value());
  }
  return out;
}
#endif  // WEFT_HAVE_OFI

// This rank's libfabric endpoints, opened before the cards are exchanged (their
// addresses go in the card): for ofi and shm+ofi, strictly (a failure is the
// communicator's); for auto, as a probe that never fails the communicator nor slows a
// machine without a fabric: libfabric is not even loaded unless an RDMA device exists
// (efa and verbs NICs both appear under /sys/class/infiniband), and only a real fabric
// provider is taken. Empty: no endpoint (auto then runs shm+tcp).
Result<Endpoints> OpenEndpoints(const MeshOptions& o) {
  if (o.size == 1) return Endpoints();
#ifdef WEFT_HAVE_OFI
  ofi::OpenOptions eo;
  if (o.mode == TransportMode::kOfi || o.mode == TransportMode::kShmOfi) return OpenRails(o, eo);
  if (o.mode != TransportMode::kAuto || !ofi::RdmaDevicePresent(net::kSysClassDir))
    return Endpoints();
  eo.fabric_only = true;
  Result<Endpoints> e = OpenRails(o, eo);
  if (e.ok()) return e;
  WEFT_INFO("rank {}: WEFT_TRANSPORT=auto: no fabric for ofi ({}); shm and tcp", o.rank,
            e.status().message());
#endif
  return Endpoints();
}

// Same-host peers first try loopback; other hosts never get it (it would reach the wrong
// machine), and otherwise the advertised order is kept.
std::vector<net::SockAddr> AddressesToTry(const Card& peer, bool same_host) {
  std::vector<net::SockAddr> out;
  if (same_host)
    for (const auto& a : peer.tcp)
      if (tcp::IsLoopback(a)) out.push_back(a);
  for (const auto& a : peer.tcp)
    if (!tcp::IsLoopback(a)) out.push_back(a);
  return out;
}

std::vector<net::SockAddr> Routable(const std::vector<net::SockAddr>& addrs) {
  std::vector<net::SockAddr> out;
  for (const auto& a : addrs)
    if (!tcp::IsLoopback(a)) out.push_back(a);
  return out;
}

// This rank's rail offer for its card (multi-rail, tcp/rails.h).
Status SetRails(const MeshOptions& o, Card* mine) {
  Result<int> wanted = tcp::RailsWantedFromEnv();
  if (!wanted.ok()) return wanted.status().WithContext(fmt::format("rank {}", o.rank));
  Result<uint64_t> stripe_min = tcp::StripeMinFromEnv();
  if (!stripe_min.ok()) return stripe_min.status().WithContext(fmt::format("rank {}", o.rank));
  mine->tcp_rails = tcp::LocalRailCount(wanted.value(), GetEnv("WEFT_SOCKET_IFNAME").value_or(""),
                                        Routable(mine->tcp).size());
  mine->stripe_min = stripe_min.value();
  return Status::Ok();
}

// The tcp link to one peer from its connections (one per rail, indexed by rail);
// `keepalive_s`: WEFT_TCP_KEEPALIVE (tcp::KeepAliveFromEnv).
Result<std::unique_ptr<Link>> MakeTcpLink(int self, int peer, std::vector<tcp::TcpConnection> conns,
                                          uint64_t stripe_min, int keepalive_s) {
  std::vector<std::unique_ptr<Link>> rails;
  for (tcp::TcpConnection& c : conns) {
    std::string what = conns.size() == 1 ? fmt::format("rank {}: socket to rank {}", self, peer)
                                         : fmt::format("rank {}: socket of rail {} to rank {}",
                                                       self, c.rail, peer);
    WEFT_RETURN_IF_ERROR(tcp::TuneDataSocket(c.fd.get(), keepalive_s).WithContext(what));
    rails.push_back(std::make_unique<tcp::TcpLink>(self, peer, std::move(c.fd), std::move(c.addr),
                                                   keepalive_s));
  }
  if (rails.size() == 1) return std::unique_ptr<Link>(std::move(rails[0]));
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<RailLink> link,
                        RailLink::Create(self, peer, std::move(rails), stripe_min));
  return std::unique_ptr<Link>(std::move(link));
}

}  // namespace

Result<TransportMode> TransportModeFromEnv() {
  std::string v = GetEnv("WEFT_TRANSPORT").value_or("");
  if (v.empty() || v == "auto") return TransportMode::kAuto;
  if (v == "tcp") return TransportMode::kTcp;
  if (v == "shm") return TransportMode::kShm;
  if (v == "ofi" || v == "shm+ofi") {
#ifdef WEFT_HAVE_OFI
    return v == "ofi" ? TransportMode::kOfi : TransportMode::kShmOfi;
#else
    return InvalidArgument(fmt::format(
        "WEFT_TRANSPORT={}, but this weft was built without libfabric (WEFT_OFI=OFF; install "
        "libfabric-dev and rebuild)",
        v));
#endif
  }
  return InvalidArgument(
      fmt::format("WEFT_TRANSPORT='{}' is not one of: auto, tcp, shm, ofi, shm+ofi", v));
}

Mesh::~Mesh() = default;

// The ofi links of the peers `UsesOfi` gives this rank in `mode`, over this rank's
// endpoints (one per rail); every rank has them (their addresses are in its card) and the
// same provider. A pair on two hosts stripes over the rails both have (RailLink); one on
// the same host uses rail 0 alone.
Status Mesh::ConnectOfiPeers(const MeshOptions& o, TransportMode mode, const Card& mine,
                             const std::vector<Card>& cards, const Endpoints& endpoints) {
#ifdef WEFT_HAVE_OFI
  for (int r = 0; r < o.size; ++r) {
    if (cards[r].ofi_provider != mine.ofi_provider || cards[r].ofi_addrs.empty()) {
      return InvalidUsage(fmt::format(
          "rank {} uses the ofi provider '{}' but rank {} uses '{}' (set WEFT_OFI_PROVIDER to the "
          "same value on every rank)",
          o.rank, mine.ofi_provider, r, cards[r].ofi_provider));
    }
  }
  const bool remote = std::any_of(cards.begin(), cards.end(),
                                  [&](const Card& c) { return c.host_id != mine.host_id; });
  for (size_t k = 0; k < endpoints.size(); ++k) {
    // Rail k's endpoint reaches each peer's rail k (its last one, for a peer with fewer:
    // an address that pair never uses, so that the table is indexed by rank).
    std::vector<std::vector<uint8_t>> addrs(o.size);
    for (int r = 0; r < o.size; ++r)
      addrs[r] = cards[r].ofi_addrs[std::min(k, cards[r].ofi_addrs.size() - 1)];
    WEFT_RETURN_IF_ERROR(endpoints[k]->InsertPeers(addrs));
    if (remote) ofi_links_.push_back({endpoints[k]->domain(), endpoints[k]->nic_speed_mbps()});
  }
  for (int r = 0; r < o.size; ++r) {
    const bool same_host = cards[r].host_id == mine.host_id;
    if (r == o.rank || !UsesOfi(mode, same_host)) continue;
    const uint64_t eager = std::min(mine.ofi_eager, cards[r].ofi_eager);
    const int n = PairRails(same_host, static_cast<int>(endpoints.size()),
                            static_cast<int>(cards[r].ofi_addrs.size()));
    if (n == 1) {
      links_[r] = std::make_unique<ofi::OfiLink>(o.rank, r, endpoints[0], eager);
      continue;
    }
    std::vector<std::unique_ptr<Link>> rails;
    for (int k = 0; k < n; ++k)
      rails.push_back(std::make_unique<ofi::OfiLink>(o.rank, r, endpoints[k], eager));
    WEFT_ASSIGN_OR_RETURN(links_[r], RailLink::Create(o.rank, r, std::move(rails), kOfiStripeMin));
    WEFT_INFO("rank {}: {} ofi rails to rank {}, messages of {} bytes or more striped", o.rank, n,
              r, kOfiStripeMin);
  }
  return Status::Ok();
#else
  (void)endpoints;
  return InvalidArgument("WEFT_TRANSPORT=ofi, but this weft was built without libfabric");
#endif
}

Result<std::unique_ptr<Mesh>> Mesh::Connect(const MeshOptions& o, const AllGatherFn& allgather) {
  WEFT_RETURN_IF_ERROR(CheckOptions(o));
  std::unique_ptr<Mesh> mesh(new Mesh());
  mesh->rank_ = o.rank;
  mesh->links_.resize(o.size);

  // Open the endpoint and listen before publishing the card, so a peer that reads our
  // addresses finds us up.
  Card mine;
  mine.rank = o.rank;
  mine.size = o.size;
  mine.comm_id = o.comm_id;
  mine.mode = o.mode;
  mine.host_id = LocalHostId();
  WEFT_ASSIGN_OR_RETURN(Endpoints endpoints, OpenEndpoints(o));
#ifdef WEFT_HAVE_OFI
  if (!endpoints.empty()) {
    mine.ofi_provider = endpoints[0]->provider();
    mine.ofi_eager = endpoints[0]->limits().eager_bytes;
    for (const auto& e : endpoints) {
      mine.ofi_addrs.push_back(e->address());
      mine.ofi_eager = std::min(mine.ofi_eager, e->limits().eager_bytes);
    }
  }
#endif
  // tcp only where some pair may use it: never with ofi, nor with auto that found a
  // fabric (a rank that did not fails the mode check below anyway).
  const TransportMode mode = ResolvedMode(mine);
  tcp::Listener listener;
  if (o.size > 1 && (mode == TransportMode::kAuto || mode == TransportMode::kTcp)) {
    Result<tcp::Listener> l = tcp::OpenListener(o.rank);
    if (!l.ok()) return l.status().WithContext(fmt::format("rank {}: tcp listener", o.rank));
    listener = std::move(l).value();
    mine.tcp = listener.addrs;
    WEFT_RETURN_IF_ERROR(SetRails(o, &mine));
  }

  Result<std::vector<std::string>> raw = allgather(EncodeCard(mine));
  if (!raw.ok())
    return raw.status().WithContext(fmt::format("rank {}: exchanging transport cards", o.rank));
  WEFT_ASSIGN_OR_RETURN(std::vector<Card> cards, DecodeCards(o, mine, raw.value()));
  for (const Card& c : cards) mesh->host_ids_.push_back(c.host_id);
  if (o.size == 1) return mesh;
  // Pairs are chosen from the cards as exchanged (this rank's included), so that both
  // ranks of a pair decide from the same two host ids.
  mine.host_id = cards[o.rank].host_id;

  // Choose per peer; the choice is symmetric because every rank sees the same cards.
  int ofi_peers = 0;
  std::vector<int> shm_peers;
  std::vector<tcp::TcpPeer> connect_to;
  std::vector<tcp::PeerRail> accept_from;
  std::vector<int> pair_rails(o.size, 0);  // tcp connections to each peer (0: not tcp)
  for (int r = 0; r < o.size; ++r) {
    if (r == o.rank) continue;
    bool same_host = cards[r].host_id == mine.host_id;
    if (UsesOfi(mode, same_host)) {
      ++ofi_peers;
    } else if (same_host && mode != TransportMode::kTcp) {
      shm_peers.push_back(r);
    } else if (mode == TransportMode::kShm) {
      return InvalidArgument(
          fmt::format("rank {}: WEFT_TRANSPORT=shm, but rank {} is on another host ({} vs {})",
                      o.rank, r, cards[r].host_id, mine.host_id));
    } else {
      // Rail 0 tries every address as a single rail does; rail k its peer's rail k first.
      pair_rails[r] = tcp::PairRails(same_host, mine.tcp_rails, cards[r].tcp_rails);
      for (int k = 0; k < pair_rails[r]; ++k) {
        if (r > o.rank) {
          accept_from.push_back(tcp::PeerRail{r, k});
        } else if (k == 0) {
          connect_to.push_back(tcp::TcpPeer{r, AddressesToTry(cards[r], same_host), 0});
        } else {
          connect_to.push_back(tcp::TcpPeer{r, tcp::RailAddresses(Routable(cards[r].tcp), k), k});
        }
      }
    }
  }
  WEFT_INFO("rank {}: {} shm peer(s), {} tcp peer(s), {} ofi peer(s){}{} (WEFT_TRANSPORT={})",
            o.rank, shm_peers.size(),
            std::count_if(pair_rails.begin(), pair_rails.end(), [](int n) { return n > 0; }),
            ofi_peers, ofi_peers > 0 ? " over " : "", ofi_peers > 0 ? mine.ofi_provider : "",
            DescribeMode(mine));
  if (ofi_peers > 0)
    WEFT_RETURN_IF_ERROR(mesh->ConnectOfiPeers(o, mode, mine, cards, endpoints));

  WEFT_ASSIGN_OR_RETURN(auto shm_links,
                        shm::ConnectShmPeers(o.rank, o.comm_id, shm_peers, o.deadline));
  for (auto& l : shm_links) mesh->links_[l->peer()] = std::move(l);

  if (!connect_to.empty() || !accept_from.empty()) {
    WEFT_ASSIGN_OR_RETURN(std::vector<tcp::TcpConnection> conns,
                          tcp::ConnectPeers(o.rank, o.size, o.comm_id, o.key, listener.raw_fds(),
                                            connect_to, accept_from, o.deadline));
    // Read once for every tcp link of the mesh (their sockets' keep-alive and stall bound).
    Result<int> keepalive_s = tcp::KeepAliveFromEnv();
    if (!keepalive_s.ok()) return keepalive_s.status().WithContext(fmt::format("rank {}", o.rank));
    std::vector<std::vector<tcp::TcpConnection>> by_peer(o.size);
    for (tcp::TcpConnection& c : conns) {
      if (pair_rails[c.rank] > 1 && c.rank < o.rank) {
        std::vector<net::SockAddr> peer_rails = Routable(cards[c.rank].tcp);
        std::string want =
            static_cast<size_t>(c.rail) < peer_rails.size() ? peer_rails[c.rail].ToString() : "";
        if (c.addr != want)
          WEFT_WARN(
              "rank {}: tcp rail {} to rank {} connected to {}, not to that rail's {}: two "
              "rails share a path (check the routes of WEFT_SOCKET_IFNAME's interfaces)",
              o.rank, c.rail, c.rank, c.addr, want);
      }
      if (cards[c.rank].host_id != mine.host_id) mesh->NoteRemoteSource(c.fd.get());
      by_peer[c.rank].resize(pair_rails[c.rank]);
      by_peer[c.rank][c.rail] = std::move(c);
    }
    for (int r = 0; r < o.size; ++r) {
      if (by_peer[r].empty()) continue;
      uint64_t stripe_min = std::max(mine.stripe_min, cards[r].stripe_min);
      if (pair_rails[r] > 1)
        WEFT_INFO("rank {}: {} tcp rails to rank {}, messages of {} bytes or more striped", o.rank,
                  pair_rails[r], r, stripe_min);
      WEFT_ASSIGN_OR_RETURN(mesh->links_[r], MakeTcpLink(o.rank, r, std::move(by_peer[r]),
                                                         stripe_min, keepalive_s.value()));
    }
  }
  return mesh;  // the listener closes here: every connection is made
}

void Mesh::NoteRemoteSource(int fd) {
  // Which interface a connection leaves by is the routing table's choice, so ask the
  // socket rather than predict it from the advertised addresses. A socket that cannot
  // say is left out (it is about to fail its first transfer anyway).
  Result<net::SockAddr> local = net::LocalAddress(fd);
  if (!local.ok()) return;
  local->set_port(0);
  const std::string text = local->ToString();
  for (const net::SockAddr& a : remote_sources_)
    if (a.ToString() == text) return;
  remote_sources_.push_back(local.value());
}

std::vector<UsedLink> Mesh::UsedLinks(const std::string& sys_class) const {
  if (!ofi_links_.empty()) {
    std::vector<UsedLink> out;
    for (const OfiDomain& d : ofi_links_) out.push_back(OfiUsedLink(d.name, d.nic_mbps, sys_class));
    return out;
  }
  return TcpUsedLinks(remote_sources_, sys_class);
}

void Mesh::ShutdownAll() {
  for (auto& link : links_)
    if (link) link->Shutdown();
}

void Mesh::AbortAll(const Status& cause) {
  for (auto& link : links_)
    if (link) link->SendAbort(cause);
  ShutdownAll();
}

}  // namespace weft::transport
