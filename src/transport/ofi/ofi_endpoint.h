// The libfabric side of the ofi transport: one reliable-datagram endpoint (FI_EP_RDM,
// tagged messages) per rail of a communicator (WEFT_OFI_NRAILS; ofi/rail_setup.h), each
// on its own domain (NIC), with its fabric, domain, address vector and completion queue.
// Every OfiLink of the communicator on that rail shares it (links hold a shared_ptr; the
// endpoint closes when the last link goes), so a rail of a communicator of N ranks costs
// one endpoint and one address per rank rather than N-1 of each, and the addresses (one
// per rail) go into the card exchanged by Mesh::Connect.
//
// Provider and domain (NIC) choice, and the provider's limits: provider.h.
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
#include "transport/ofi/fabric_lib.h"
#include "transport/ofi/provider.h"
#include "transport/wire.h"

namespace weft::transport::ofi {

class OfiLink;

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

}  // namespace weft::transport::ofi
