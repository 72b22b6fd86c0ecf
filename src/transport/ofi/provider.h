// The ofi transport's provider, looked up once per rank for all its endpoints
// (ofi_endpoint.h), and what weft knows about it.
//
// Provider choice: WEFT_OFI_PROVIDER when set ("efa", "verbs;ofi_rxm", "tcp;ofi_rxm",
// "shm", ...), otherwise the first of efa, verbs;ofi_rxm, tcp;ofi_rxm that libfabric
// offers (for WEFT_TRANSPORT=auto only a real fabric: OpenOptions::fabric_only).
// Everything specific to one provider (efa's limits) is in ProviderLimits, and the
// libfabric settings weft changes for one are in TuneProvider.
//
// Domain (NIC) choice: a provider may offer several domains for FI_EP_RDM (efa: one per
// NIC, four on a p4d; tcp: one per interface). The rank with local index i opens its
// endpoint on domain i mod D of them (WEFT_OFI_DOMAIN pins the list; nic_choice.h), so
// the ranks of a host spread over its NICs. For the providers addressed by IP (tcp,
// verbs through rxm) only the interfaces WEFT_SOCKET_IFNAME selects count, and the
// endpoint is bound to the chosen interface's address so that peers can reach it.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/socket.h"

namespace weft::transport::ofi {

class OfiEndpoint;

// The limits the link must respect, from the provider's fi_info. The one place where
// provider-specific knowledge lives.
struct ProviderLimits {
  // Largest payload of one tagged message; larger payloads are split into chunks.
  uint64_t max_chunk = 0;
  // Room for a payload behind the header in a staging buffer (8 KiB; 4 KiB on efa): the
  // most an eager payload can be where it is copied through staging on either side.
  uint64_t staged_eager_bytes = 0;
  // The largest payload this rank sends and receives inside the header's message (an
  // eager payload); larger ones follow the header as their own message(s). Where both
  // directions use the user's buffer (send_iov and recv_iov) that is 1 MiB (at most a
  // chunk), so an op up to that is one message; otherwise staged_eager_bytes.
  // WEFT_OFI_EAGER lowers it. It is published in the card, and each link uses the smaller
  // of its two ranks' values (both ends of a link must split an op the same way).
  uint64_t eager_bytes = 0;
  // Bits of the tag that carry the message sequence number.
  int seq_bits = 0;
  // Post payload receives together with their header's receive rather than after the
  // header checked out (WEFT_OFI_PREPOST overrides). Providers that stage unexpected
  // messages (rxm over tcp) then place the payload straight into the user's buffer; the
  // price: when the ranks made different calls, bytes of the peer's call may reach the
  // buffer before the header check fails the receive (the error is the same).
  bool prepost_payload = false;
  // An eager payload is sent from the user's buffer as the second iovec of the header's
  // message (fi_tsendv) rather than copied behind the header in staging: the same bytes
  // on the wire. Where tx iov_limit >= 2 and buffers need no registration (one per small
  // send would cost more than the copy).
  bool send_iov = false;
  // An eager payload is received straight into the user's buffer (fi_trecvv: the header
  // into staging, the payload into the buffer) rather than into staging and copied out
  // after the header check. Only where payload receives are pre-posted anyway (the
  // peer's bytes may reach the buffer before the check) and rx iov_limit >= 2. Local to
  // each rank: the wire is the same either way.
  bool recv_iov = false;
};
ProviderLimits LimitsFor(const fi_info* info);

struct OpenOptions {
  // This rank's index among the ranks of its host: picks the domain (NIC).
  int local_index = 0;
  // WEFT_TRANSPORT=auto: take the provider only if it is a real fabric
  // (AutoPicksProvider, nic_choice.h); otherwise fail (Unavailable), never trying tcp.
  bool fabric_only = false;
};

// Frees an fi_info list (fi_freeinfo).
struct FiInfoDeleter {
  void operator()(fi_info* i) const;
};
using FiInfoPtr = std::unique_ptr<fi_info, FiInfoDeleter>;

// What the ofi transport's provider offers on this host, looked up once (fi_getinfo, the
// interfaces WEFT_SOCKET_IFNAME selects, WEFT_OFI_DOMAIN) for all of a rank's endpoints:
// how many to open (WEFT_OFI_NRAILS=auto) and each one's domain come from it.
class ProviderOffer {
 public:
  // The provider (as OfiEndpoint::Open chooses it) and its domains. Loads libfabric.
  // Blocking.
  static Result<std::shared_ptr<const ProviderOffer>> Find(int rank,
                                                           const OpenOptions& options = {});
  // How many domains (NICs) this host offers the ofi transport, for all its ranks: the
  // provider's, less the interfaces WEFT_SOCKET_IFNAME does not select where addressed by
  // IP, or WEFT_OFI_DOMAIN's list. At least 1.
  int domain_count() const;

 private:
  friend class OfiEndpoint;
  ProviderOffer() = default;
  // The fi_info to open for the rank with local index `local_index` (its domain chosen,
  // bound to its interface where addressed by IP).
  Result<FiInfoPtr> PickDomain(int rank, int local_index) const;

  FiInfoPtr all_;                       // every fi_info of the provider
  std::vector<net::Interface> ifs_;     // selected interfaces (IP providers only)
  std::vector<std::string> offered_;    // their domains, in libfabric's order
  std::vector<std::string> pinned_;     // WEFT_OFI_DOMAIN's list, or empty
};

// Sets libfabric's own variables (FI_*) that weft changes for `provider` (rxm over tcp:
// every message eager), unless the user set them. Before the domain and endpoint open,
// which read them.
void TuneProvider(const std::string& provider);

// The largest eager payload (ProviderLimits::eager_bytes) a rank can send and receive,
// once `l` says how it moves them (send_iov, recv_iov): what staging holds, or 1 MiB
// from and into the user's buffer both ways; lowered by WEFT_OFI_EAGER. `max_msg`: the
// provider's; `rank` for messages.
Result<uint64_t> EagerOffer(const ProviderLimits& l, uint64_t max_msg, int rank);

}  // namespace weft::transport::ofi
