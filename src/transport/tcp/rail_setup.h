// The tcp part of Mesh::Connect: the listener and rail offer that go into this rank's
// card before the cards are exchanged, then the connections (tcp_setup.h, one per rail:
// rails.h) to the peers the mesh gives tcp, and each one's link (a RailLink over several
// rails). Both ranks of a pair plan it from the same two cards, so they agree on the
// pair's rails and on which of them connects.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/auth.h"
#include "net/socket.h"
#include "transport/link.h"
#include "transport/tcp/tcp_setup.h"

namespace weft::transport {
struct Card;
}  // namespace weft::transport

namespace weft::transport::tcp {

class RailSetup {
 public:
  // Listens, and writes where (mine->tcp) and this rank's rail offer (WEFT_SOCKET_NRAILS,
  // WEFT_TCP_STRIPE_MIN) into `mine`. Before the card is published, so that a peer that
  // reads the addresses finds the listener up.
  Status Listen(Card* mine);
  // After the exchange: the pair of this rank (`mine`) and `peer` runs over tcp.
  void AddPeer(const Card& mine, const Card& peer);
  // How many peers AddPeer was given.
  int peer_count() const;
  // Makes every added peer's connections (connecting to the lower ranks, accepting the
  // higher: ConnectPeers, authenticated with `key`, within `deadline`) and sets
  // (*links)[peer] to its link; `cards` are every rank's, as exchanged. `remote_sources`
  // gets the distinct local addresses (port 0) of the connections to other hosts
  // (Mesh::UsedLinks). Does nothing without peers. The listener closes with this object.
  Status Connect(const net::AuthKey& key, const Deadline& deadline, const Card& mine,
                 const std::vector<Card>& cards, std::vector<std::unique_ptr<Link>>* links,
                 std::vector<net::SockAddr>* remote_sources);

 private:
  Listener listener_;
  std::vector<int> pair_rails_;  // connections to each peer, by rank (0: not tcp)
  std::vector<TcpPeer> connect_to_;
  std::vector<PeerRail> accept_from_;
};

}  // namespace weft::transport::tcp
