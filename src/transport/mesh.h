// The set of links of one communicator: one per peer, chosen per peer (shm when the peer
// is on this host; between hosts tcp, or ofi where WEFT_TRANSPORT=shm+ofi asks for it or
// auto finds a real fabric; WEFT_TRANSPORT=tcp/shm/ofi force one for every pair). Built
// collectively: every rank calls Mesh::Connect with the same comm_id and an allgather
// function that exchanges one string per rank (the store during init, the parent
// communicator during split).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/auth.h"
#include "transport/link.h"
#include "transport/transport_mode.h"
#include "transport/used_links.h"

namespace weft::transport {

struct MeshOptions {
  int rank = 0;
  int size = 1;
  uint64_t comm_id = 0;   // unique per communicator; the same on every rank
  net::AuthKey key;       // the job's key: tcp connections authenticate with it
  TransportMode mode = TransportMode::kAuto;
  // This rank's index among the ranks of its host (the launcher's local rank), known
  // before the cards are exchanged: picks its ofi domain (NIC), round robin. < 0:
  // unknown, the rank is used instead (ranks on a host are usually consecutive).
  int local_index = -1;
  // How many ranks the launcher started on this host (its local world size); <= 0:
  // unknown. WEFT_OFI_NRAILS=auto shares the host's NICs among them.
  int local_size = 0;
  Deadline deadline = Deadline::Never();  // for the whole connection phase
};

// Gathers one string from every rank, indexed by rank. Blocking, bounded by a deadline.
using AllGatherFn = std::function<Result<std::vector<std::string>>(const std::string& mine)>;

class Mesh {
 public:
  // Collective over all ranks. Errors name the peer and what failed.
  static Result<std::unique_ptr<Mesh>> Connect(const MeshOptions& options,
                                               const AllGatherFn& allgather);
  ~Mesh();

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(links_.size()); }
  // The link to `peer` (nullptr for peer == rank()).
  Link* link(int peer) const { return links_[peer].get(); }
  // Shuts every link down (Link::Shutdown): peers waiting on this rank fail at once.
  void ShutdownAll();
  // Link::SendAbort(cause) on every link, then ShutdownAll(). Never blocks.
  void AbortAll(const Status& cause);
  // The host identity of every rank (equal strings: same host), from the exchange.
  const std::vector<std::string>& host_ids() const { return host_ids_; }
  // The links this rank uses to reach ranks on other hosts (used_links.h): the interfaces
  // its tcp connections to them leave by, or its ofi domains (one per rail). Empty when
  // every peer is on this host (or it runs over shm only). Blocking: reads interface speeds under
  // `sys_class` (net::kSysClassDir; tests point it elsewhere); call at setup, not per call.
  std::vector<UsedLink> UsedLinks(const std::string& sys_class) const;

 private:
  Mesh() = default;
  int rank_ = 0;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::string> host_ids_;
  // tcp: the distinct local addresses (port 0) of the connections to other hosts.
  std::vector<net::SockAddr> remote_sources_;
  // ofi, when some peer is on another host: each rail's endpoint's domain and NIC speed.
  std::vector<OfiDomain> ofi_links_;
};

// An identity shared by processes on the same host (hostname + kernel boot id).
std::string LocalHostId();

}  // namespace weft::transport
