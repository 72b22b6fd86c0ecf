// The libfabric side of the ofi transport: one reliable-datagram endpoint (FI_EP_RDM,
// tagged messages) per communicator, with its fabric, domain, address vector and
// completion queue. Every OfiLink of the communicator shares it (links hold a
// shared_ptr; the endpoint closes when the last link goes), so a communicator of N ranks
// costs one endpoint and one address per rank rather than N-1 of each, and the address
// goes into the card exchanged by Mesh::Connect.
//
// Provider choice: WEFT_OFI_PROVIDER when set ("efa", "verbs;ofi_rxm", "tcp;ofi_rxm",
// "shm", ...), otherwise the first of efa, verbs;ofi_rxm, tcp;ofi_rxm that libfabric
// offers (for WEFT_TRANSPORT=auto only a real fabric: OpenOptions::fabric_only).
// Everything specific to one provider (efa's limits) is in ProviderLimits.
//
// Domain (NIC) choice: a provider may offer several domains for FI_EP_RDM (efa: one per
// NIC, four on a p4d; tcp: one per interface). The rank with local index i opens its
// endpoint on domain i mod D of them (WEFT_OFI_DOMAIN pins the list; nic_choice.h), so
// the ranks of a host spread over its NICs. For the providers addressed by IP (tcp,
// verbs through rxm) only the interfaces WEFT_SOCKET_IFNAME selects count, and the
// endpoint is bound to the chosen interface's address so that peers can reach it.
//
// Completions: Poll() reads the completion queue and hands each completion to the
// request it belongs to (a Request is the op context libfabric hands back). Nothing here
// blocks: posting returns EAGAIN-style "not now" and the link retries from Progress().
// The completion queue is opened with a file descriptor as its wait object (FI_WAIT_FD,
// unless WEFT_OFI_WAIT_FD=0 or the provider refuses it), which WaitFd() hands to the
// executor to sleep on in poll(2), as it does on tcp sockets.
//
// Memory registration happens only when the provider requires it (FI_MR_LOCAL), or when
// WEFT_OFI_MR=1 forces it (to test the path on providers that do not). The staging
// buffers (headers and small payloads) come from slabs that are registered once and kept
// until the endpoint closes: that is the cache. A user buffer is registered for the
// operation that uses it and closed when the operation completes. Caching user
// registrations safely needs to notice memory being unmapped and remapped; libfabric's
// providers that need registration (efa, verbs) keep such a cache themselves, with a
// memory monitor (FI_MR_CACHE_MONITOR), so a second cache above theirs would add only the
// risk of a stale registration.
//
// Thread-safety: one thread at a time (the communicator's), FI_THREAD_DOMAIN.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/socket.h"
#include "transport/wire.h"

namespace weft::transport::ofi {

class OfiLink;

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

// One posted tagged operation. `ctx` must come first: libfabric hands the address of the
// fi_context2 back in the completion, and providers with FI_CONTEXT/FI_CONTEXT2 use it.
struct Request {
  fi_context2 ctx;
  OfiLink* link = nullptr;  // nullptr once the link is gone (the request is orphaned)
  void* entry = nullptr;    // the link's op entry
  int part = 0;  // 0: header message, 1..n: payload chunks, -1/-2: control in/out
  fid_mr* mr = nullptr;     // a registration of a user buffer, closed with the request
};

// A staging buffer of OfiEndpoint::staging_bytes(): the header message of one op.
struct Staging {
  uint8_t* data = nullptr;
  void* desc = nullptr;  // its registration's descriptor, or nullptr
};

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

class OfiEndpoint {
 public:
  // Opens fabric, domain, AV, CQ and endpoint on the chosen provider and domain. `rank`
  // is only for error messages. Blocking (libfabric's provider set-up).
  static Result<std::shared_ptr<OfiEndpoint>> Open(int rank, const OpenOptions& options = {});
  // The same from an offer already found: the rank's endpoints (one per rail) share one
  // look-up. `local_index` picks the domain, as OpenOptions::local_index.
  static Result<std::shared_ptr<OfiEndpoint>> Open(int rank, const ProviderOffer& offer,
                                                   int local_index);
  ~OfiEndpoint();
  OfiEndpoint(const OfiEndpoint&) = delete;
  OfiEndpoint& operator=(const OfiEndpoint&) = delete;

  // "tcp;ofi_rxm" (fabric_attr->prov_name).
  const std::string& provider() const { return provider_; }
  // This endpoint's address (fi_getname), to publish in the card.
  const std::vector<uint8_t>& address() const { return address_; }
  const ProviderLimits& limits() const { return limits_; }
  // The domain the endpoint opened ("rdmap16s27-rdm" on efa, an interface name on tcp),
  // and its NIC's link speed in Mbit/s where the provider reports it (fi_info's
  // nic->link_attr->speed), < 0 where it does not: the link the planner's figures can be
  // detected from (transport/used_links.h).
  std::string domain() const;
  int64_t nic_speed_mbps() const;
  // Tests: smaller chunks, to split payloads without gigabytes (with WEFT_OFI_EAGER, so
  // that payloads over it are chunked). Before links are made.
  void set_max_chunk_for_test(uint64_t bytes) { limits_.max_chunk = bytes; }

  // Inserts the peers' addresses (index = rank; the entry for this rank is ignored).
  Status InsertPeers(const std::vector<std::vector<uint8_t>>& addrs);
  fi_addr_t PeerAddr(int rank) const { return peer_addrs_[rank]; }
  fid_ep* ep() const { return ep_; }

  // The completion queue's file descriptor when it is safe to sleep on it now: fi_trywait
  // found nothing to read and nothing the provider must progress first (with manual
  // progress, an event it has not yet turned into a completion would not wake the fd).
  // -1 when that is not so (call Poll() again) or when the queue has no fd. Never blocks.
  int WaitFd();
  bool has_wait_fd() const { return wait_fd_ >= 0; }

  // Reads completions and dispatches them to their links. Returns the number handled.
  // A CQ-level error (not attributable to a request) is returned as a Status.
  Result<int> Poll();

  // Registers [ptr, ptr+len) for `req` when the provider needs it (req->mr; closed when
  // the request is released). Returns the descriptor to pass, or nullptr.
  Result<void*> RegisterFor(Request* req, const void* ptr, size_t len);
  Result<fid_mr*> Register(const void* ptr, size_t len);

  // Where a mismatched call's larger eager message lands past what the receive expected,
  // so that its header still arrives and is checked (rxm delivers nothing of a truncated
  // receive): the third iovec of every recv_iov receive, limits().eager_bytes long (no
  // peer's eager message carries more), shared by all of them and never read; its pages
  // are touched only by such a message. Null where there is no room for a third iovec or
  // buffers must be registered.
  void* overflow_sink() const { return sink_.get(); }
  size_t overflow_sink_bytes() const { return sink_bytes_; }

  // Staging buffers: 32 header bytes + limits().staged_eager_bytes each, registered when
  // needed.
  size_t staging_bytes() const { return sizeof(WireHeader) + limits_.staged_eager_bytes; }
  Result<Staging> AcquireStaging();
  void ReleaseStaging(Staging s);

  // A request owned by the endpoint, so that a completion arriving after its link is gone
  // still finds valid memory. Released on completion.
  Request* NewRequest(OfiLink* link, void* entry, int part);
  void Release(Request* r);

 private:
  OfiEndpoint() = default;
  // Opens cq_ with a file descriptor (wait_fd_) where the provider allows, else without.
  Status OpenCompletionQueue();
  struct Slab {
    std::unique_ptr<uint8_t[]> bytes;
    fid_mr* mr = nullptr;
  };

  int rank_ = 0;
  std::string provider_;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  int wait_fd_ = -1;  // the CQ's wait object (owned by the CQ), or -1
  std::unique_ptr<uint8_t[]> sink_;  // overflow_sink()
  size_t sink_bytes_ = 0;
  fid_ep* ep_ = nullptr;
  std::vector<uint8_t> address_;
  std::vector<fi_addr_t> peer_addrs_;
  ProviderLimits limits_;
  bool register_ = false;
  uint64_t next_key_ = 1;  // requested keys, where the provider does not choose them
  std::vector<Slab> slabs_;
  std::vector<Staging> free_staging_;
  std::vector<std::unique_ptr<Request>> requests_;  // every request ever made
  std::vector<Request*> free_requests_;
};

// "fi_tsend: Resource temporarily unavailable (-11)"
std::string FiError(const char* what, int ret);

}  // namespace weft::transport::ofi
