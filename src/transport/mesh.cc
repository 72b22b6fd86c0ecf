// Mesh::Connect: exchange cards, choose a transport per peer, then set up each one's
// links (shm/shm_setup.h, tcp/rail_setup.h, ofi/rail_setup.h), and remember which links
// reach other hosts (Mesh::UsedLinks).
#include "transport/mesh.h"

#include <fmt/format.h>

#include "core/log.h"
#include "transport/card.h"
#include "transport/ofi/rail_setup.h"
#include "transport/shm/shm_setup.h"
#include "transport/tcp/rail_setup.h"

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

// This rank's card before any transport has added to it.
Card OwnCard(const MeshOptions& o) {
  Card mine;
  mine.rank = o.rank;
  mine.size = o.size;
  mine.comm_id = o.comm_id;
  mine.mode = o.mode;
  mine.host_id = LocalHostId();
  return mine;
}

// Which peers this rank reaches over ofi (counted; ofi::RailSetup::Connect finds them
// again from the cards) and over shm; the others are added to `tcp`.
struct PeerChoice {
  int ofi = 0;
  std::vector<int> shm;
};

// Chooses every peer's transport in `mode` (resolved). The choice is symmetric because
// every rank sees the same cards.
Result<PeerChoice> ChoosePeers(TransportMode mode, const Card& mine, const std::vector<Card>& cards,
                               tcp::RailSetup* tcp) {
  PeerChoice out;
  for (const Card& peer : cards) {
    if (peer.rank == mine.rank) continue;
    const bool same_host = peer.host_id == mine.host_id;
    if (UsesOfi(mode, same_host)) {
      ++out.ofi;
    } else if (same_host && mode != TransportMode::kTcp) {
      out.shm.push_back(peer.rank);
    } else if (mode == TransportMode::kShm) {
      return InvalidArgument(
          fmt::format("rank {}: WEFT_TRANSPORT=shm, but rank {} is on another host ({} vs {})",
                      mine.rank, peer.rank, peer.host_id, mine.host_id));
    } else {
      tcp->AddPeer(mine, peer);
    }
  }
  return out;
}

}  // namespace

Mesh::~Mesh() = default;

Result<std::unique_ptr<Mesh>> Mesh::Connect(const MeshOptions& o, const AllGatherFn& allgather) {
  WEFT_RETURN_IF_ERROR(CheckOptions(o));
  std::unique_ptr<Mesh> mesh(new Mesh());
  mesh->rank_ = o.rank;
  mesh->links_.resize(o.size);

  // Open the endpoints and listen before publishing the card, so a peer that reads our
  // addresses finds us up.
  Card mine = OwnCard(o);
  ofi::RailSetup ofi;
  WEFT_RETURN_IF_ERROR(ofi.Open(o.local_index, o.local_size, &mine));
  // tcp only where some pair may use it: never with ofi, nor with auto that found a
  // fabric (a rank that did not fails the mode check below anyway).
  const TransportMode mode = ResolvedMode(mine);
  tcp::RailSetup tcp;
  if (o.size > 1 && (mode == TransportMode::kAuto || mode == TransportMode::kTcp))
    WEFT_RETURN_IF_ERROR(tcp.Listen(&mine));

  Result<std::vector<std::string>> raw = allgather(EncodeCard(mine));
  if (!raw.ok())
    return raw.status().WithContext(fmt::format("rank {}: exchanging transport cards", o.rank));
  WEFT_ASSIGN_OR_RETURN(std::vector<Card> cards, DecodeCards(o, mine, raw.value()));
  for (const Card& c : cards) mesh->host_ids_.push_back(c.host_id);
  if (o.size == 1) return mesh;
  // Pairs are chosen from the cards as exchanged (this rank's included), so that both
  // ranks of a pair decide from the same two host ids.
  mine.host_id = cards[o.rank].host_id;

  WEFT_ASSIGN_OR_RETURN(PeerChoice peers, ChoosePeers(mode, mine, cards, &tcp));
  WEFT_INFO("rank {}: {} shm peer(s), {} tcp peer(s), {} ofi peer(s){}{} (WEFT_TRANSPORT={})",
            o.rank, peers.shm.size(), tcp.peer_count(), peers.ofi, peers.ofi > 0 ? " over " : "",
            peers.ofi > 0 ? mine.ofi_provider : "", DescribeMode(mine));
  if (peers.ofi > 0) {
    WEFT_RETURN_IF_ERROR(ofi.Connect(mode, mine, cards, &mesh->links_));
    mesh->ofi_links_ = ofi.domains();
  }
  WEFT_ASSIGN_OR_RETURN(auto shm_links,
                        shm::ConnectShmPeers(o.rank, o.comm_id, peers.shm, o.deadline));
  for (auto& l : shm_links) mesh->links_[l->peer()] = std::move(l);
  WEFT_RETURN_IF_ERROR(
      tcp.Connect(o.key, o.deadline, mine, cards, &mesh->links_, &mesh->remote_sources_));
  return mesh;  // the listener closes here: every connection is made
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
