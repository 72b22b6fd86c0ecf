#include "transport/ofi/ofi_endpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "core/log.h"
#include "net/link_speed.h"
#include "net/socket.h"
#include "transport/ofi/fabric_lib.h"
#include "transport/ofi/nic_choice.h"
#include "transport/ofi/ofi_link.h"

namespace weft::transport::ofi {
namespace {

constexpr uint32_t kFiVersion = FI_VERSION(1, 10);
// Providers tried in order when WEFT_OFI_PROVIDER is not set.
constexpr const char* kAutoProviders[] = {"efa", "verbs;ofi_rxm", "tcp;ofi_rxm"};
// Staging buffers allocated (and registered) together.
constexpr size_t kSlabBuffers = 32;
// The eager size of a rank that sends from and receives into the user's buffer. Above it
// an op's payload follows its header as a message of its own, a cost that is small
// beside the payload's own time there. It is also the size of the overflow sink (room
// for all a mismatched call's eager message carries past the expected size, so that its
// header is read and the error names both calls), allocated once per endpoint.
constexpr uint64_t kInPlaceEagerBytes = uint64_t{1} << 20;
// Completions read per fi_cq_read call.
constexpr int kCqBatch = 16;

using InfoPtr = FiInfoPtr;

InfoPtr Hints(const char* provider) {
  InfoPtr h(Fabric().dupinfo(nullptr));  // fi_allocinfo
  if (!h) return h;
  h->caps = FI_TAGGED;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->ep_attr->type = FI_EP_RDM;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  // The registration modes weft can honour: local registration of its buffers, with
  // provider keys and virtual addresses. FI_MR_LOCAL is only used when set in the reply.
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  h->tx_attr->msg_order = FI_ORDER_NONE;  // tags carry sequence numbers: no order needed
  h->rx_attr->msg_order = FI_ORDER_NONE;
  if (provider) h->fabric_attr->prov_name = strdup(provider);
  return h;
}

// The first fi_info for `provider` (bound to `node` when given), or an error with
// libfabric's reason.
Result<InfoPtr> GetInfo(const char* provider, const char* node = nullptr) {
  InfoPtr hints = Hints(provider);
  if (!hints) return Internal("fi_allocinfo failed");
  fi_info* info = nullptr;
  int ret = Fabric().getinfo(kFiVersion, node, nullptr, node ? FI_SOURCE : 0, hints.get(), &info);
  if (ret != 0 || info == nullptr)
    return Unavailable(FiError(fmt::format("fi_getinfo(provider '{}')", provider).c_str(), ret));
  return InfoPtr(info);
}

bool AddressedByIp(const fi_info* info) {
  const uint32_t f = info->addr_format;
  return f == FI_SOCKADDR_IN || f == FI_SOCKADDR_IN6 || f == FI_SOCKADDR;
}

const char* DomainName(const fi_info* info) {
  return info->domain_attr && info->domain_attr->name ? info->domain_attr->name : nullptr;
}

// A copy of one fi_info (fi_dupinfo: without the entries after it).
Result<InfoPtr> Dup(const fi_info* info) {
  InfoPtr one(Fabric().dupinfo(info));
  if (!one) return Internal("fi_dupinfo failed");
  return one;
}

// Providers addressed by IP (tcp, and verbs through rxm's IPoIB addressing) would
// otherwise pick an interface (or the wildcard address) themselves: bind them to `iface`,
// one WEFT_SOCKET_IFNAME / WEFT_SOCKET_FAMILY select, as the tcp transport does, so that
// peers on other hosts can reach the address in the card.
Result<InfoPtr> BindToInterface(const fi_info* info, const net::Interface& iface, int rank) {
  char host[NI_MAXHOST];
  const net::SockAddr& a = iface.addr;
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a.storage), a.len, host, sizeof(host),
                  nullptr, 0, NI_NUMERICHOST) != 0)
    return Dup(info);
  std::string prov = info->fabric_attr->prov_name;
  Result<InfoPtr> bound = GetInfo(prov.c_str(), host);
  if (!bound.ok())
    return bound.status().WithContext(
        fmt::format("rank {}: binding the ofi endpoint to {} ({})", rank, iface.name, host));
  WEFT_INFO("rank {}: ofi endpoint on {} ({})", rank, iface.name, host);
  return bound;
}

// The CPUs this thread may run on (empty when the mask cannot be read).
std::vector<int> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The interfaces WEFT_SOCKET_IFNAME selects, for providers addressed by IP; none else.
Result<std::vector<net::Interface>> SelectedInterfaces(const fi_info* all) {
  if (!AddressedByIp(all)) return std::vector<net::Interface>();
  return net::SelectInterfaces();
}

// The domains `all` offers, in libfabric's order, duplicates dropped; for providers
// addressed by IP only those WEFT_SOCKET_IFNAME selects (`ifs`).
std::vector<std::string> OfferedDomains(const fi_info* all,
                                        const std::vector<net::Interface>& ifs) {
  const bool by_ip = AddressedByIp(all);
  auto selected = [&](const std::string& d) {
    return std::any_of(ifs.begin(), ifs.end(),
                       [&](const net::Interface& i) { return i.name == d; });
  };
  std::vector<std::string> offered;
  for (const fi_info* i = all; i != nullptr; i = i->next) {
    const char* d = DomainName(i);
    if (d == nullptr || (by_ip && !selected(d))) continue;
    if (std::find(offered.begin(), offered.end(), d) == offered.end()) offered.push_back(d);
  }
  return offered;
}

}  // namespace

// The domain (NIC) of the rank with local index `local_index`, from the offer: its
// domains (for providers addressed by IP, the selected interfaces), then those near the
// CPUs this rank may run on (NearDomains: a rank bound to one NUMA node keeps to its
// NICs), then ChooseDomain's round robin by `local_index` over them, or WEFT_OFI_DOMAIN's
// list. Returns the fi_info to open, bound to that domain.
Result<InfoPtr> ProviderOffer::PickDomain(int rank, int local_index) const {
  const fi_info* all = all_.get();
  const std::string prov = all->fabric_attr->prov_name ? all->fabric_attr->prov_name : "?";
  const bool by_ip = AddressedByIp(all);
  if (offered_.empty() && pinned_.empty()) {
    // An IP provider whose domains match no selected interface (names it does not use):
    // bind to the first selected interface, as before domains were chosen.
    if (by_ip && !ifs_.empty()) return BindToInterface(all, ifs_[0], rank);
    return Dup(all);
  }
  std::vector<std::string> candidates = offered_;
  if (pinned_.empty()) {
    std::vector<std::vector<int>> nic_cpus;
    for (const std::string& d : offered_) nic_cpus.push_back(NicLocalCpus(net::kSysClassDir, d));
    candidates = NearDomains(offered_, nic_cpus, AffinityCpus());
  }
  Result<std::string> domain = ChooseDomain(candidates, pinned_, local_index);
  if (!domain.ok())
    return InvalidArgument(
        fmt::format("rank {}: ofi ({}): {}", rank, prov, domain.status().message()));
  WEFT_INFO("rank {}: ofi ({}): domain {} (local index {}; {} of {}: {}; offered {})", rank,
            prov, domain.value(), local_index,
            pinned_.empty() ? "round robin over the near" : "WEFT_OFI_DOMAIN",
            pinned_.empty() ? candidates.size() : pinned_.size(),
            fmt::join(pinned_.empty() ? candidates : pinned_, ","),
            fmt::join(offered_, ","));
  if (by_ip) {
    for (const net::Interface& i : ifs_)
      if (i.name == domain.value()) return BindToInterface(all, i, rank);
  }
  for (const fi_info* i = all; i != nullptr; i = i->next) {
    const char* d = DomainName(i);
    if (d != nullptr && domain.value() == d) return Dup(i);
  }
  return Internal(fmt::format("rank {}: ofi ({}): domain {} vanished", rank, prov, domain.value()));
}

namespace {

// Settings of libfabric's own (its FI_* variables) that weft changes for one provider,
// where the provider's defaults suit weft's traffic badly; a value the user set wins.
// They are read when the domain and endpoint open, so this runs before those, once the
// provider is known (a variable for rxm over verbs must not be set for rxm over tcp).
void TuneProvider(const std::string& provider) {
  if (provider != "tcp;ofi_rxm") return;
  // rxm over tcp sends messages over 16 KiB with its rendezvous protocol: an RTS, then
  // the receiver reads the payload (RMA read emulated over the socket) and acknowledges,
  // a round trip in which both ranks must be polling (manual progress). Over a socket
  // sending eagerly is what weft's tcp link does: the payload follows its header, and
  // with dynamic receive buffers the tcp provider reads it straight into the posted
  // receive (weft pre-posts payload receives on this provider, prepost_payload). Every
  // chunk (max_chunk, 1 GiB at most) is therefore eager.
  SetEnvIfUnset("FI_OFI_RXM_EAGER_LIMIT", "1073741824");
  SetEnvIfUnset("FI_OFI_RXM_ENABLE_DYN_RBUF", "1");
}

// The largest eager payload this rank can send and receive (ProviderLimits::eager_bytes),
// once `l` says how it moves them. Through staging on either side: what staging holds.
// From and into the user's buffer both ways: kInPlaceEagerBytes, so that an op of up to
// that size is one message (each message costs rxm over tcp a trip through its progress
// and the completion queue, where weft's tcp link writes header and payload with one
// sendmsg). WEFT_OFI_EAGER (bytes) lowers it, e.g. to 8192 for the two-message ops of
// before.
Result<uint64_t> EagerOffer(const ProviderLimits& l, uint64_t max_msg, int rank) {
  uint64_t can = l.staged_eager_bytes;
  if (l.send_iov && l.recv_iov)
    can = std::min({kInPlaceEagerBytes, l.max_chunk, max_msg > 64 ? max_msg - 64 : 0});
  Result<long long> want = GetEnvInt("WEFT_OFI_EAGER", static_cast<long long>(can));
  if (!want.ok()) return want.status();
  if (want.value() < 0)
    return InvalidArgument(
        fmt::format("rank {}: WEFT_OFI_EAGER={} is negative (bytes)", rank, want.value()));
  return std::min<uint64_t>(can, static_cast<uint64_t>(want.value()));
}

// Every fi_info of the provider the ofi transport uses: WEFT_OFI_PROVIDER's, else the
// first of kAutoProviders that libfabric offers (for `options.fabric_only`, only a real
// fabric). Loads libfabric.
Result<InfoPtr> ProviderInfo(int rank, const OpenOptions& options) {
  Result<const FabricLib*> lib = LoadFabricLib();
  if (!lib.ok()) return lib.status().WithContext(fmt::format("rank {}", rank));
  std::optional<std::string> forced = GetEnv("WEFT_OFI_PROVIDER");
  InfoPtr info;
  if (forced && !forced->empty()) {
    if (options.fabric_only && !AutoPicksProvider(*forced))
      return Unavailable(
          fmt::format("rank {}: WEFT_OFI_PROVIDER='{}' is not a fabric that "
                      "WEFT_TRANSPORT=auto uses (efa, verbs;ofi_rxm)",
                      rank, *forced));
    Result<InfoPtr> i = GetInfo(forced->c_str());
    if (!i.ok())
      return InvalidArgument(fmt::format("rank {}: WEFT_OFI_PROVIDER='{}' is not usable: {}", rank,
                                         *forced, i.status().message()));
    info = std::move(i).value();
  } else {
    std::string tried;
    for (const char* p : kAutoProviders) {
      // auto never asks for the others: a provider it would not use costs only start-up.
      if (options.fabric_only && !AutoPicksProvider(p)) continue;
      Result<InfoPtr> i = GetInfo(p);
      if (i.ok()) {
        info = std::move(i).value();
        break;
      }
      tried += fmt::format("; {}", i.status().message());
    }
    if (!info)
      return Unavailable(fmt::format("rank {}: no libfabric provider for the ofi transport{}",
                                     rank, tried));
  }
  return info;
}

}  // namespace

std::string FiError(const char* what, int ret) {
  return fmt::format("{}: {} ({})", what, Fabric().strerror(ret < 0 ? -ret : ret), ret);
}

ProviderLimits LimitsFor(const fi_info* info) {
  ProviderLimits l;
  std::string prov = info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "";
  uint64_t max_msg = info->ep_attr->max_msg_size;
  // Chunks of at most 1 GiB keep each message well inside what every provider handles.
  l.max_chunk = std::min<uint64_t>(max_msg, uint64_t{1} << 30);
  // Staged payloads ride in the header message: below the rxm eager limit (16 KiB).
  l.staged_eager_bytes = std::min<uint64_t>(8192, max_msg > 64 ? max_msg - 64 : 0);
  // 64-bit tags unless the provider says fewer (mem_tag_format, 0 means "any").
  l.seq_bits = 40;
  // rxm over tcp keeps an unexpected message in a buffer it allocates and copies it out
  // when the receive is posted; a receive posted in advance gets the bytes straight from
  // the socket (TuneProvider makes every message eager there).
  l.prepost_payload = prov == "tcp;ofi_rxm";
  l.send_iov = info->tx_attr->iov_limit >= 2;
  if (prov.rfind("efa", 0) == 0) {
    // efa (libfabric fi_efa(7)): RDM messages are not ordered unless FI_ORDER_SAS is
    // asked for (we do not need it: every message has its own tag); its max_msg_size is
    // large (the provider segments), but a message over the device MTU takes the
    // provider's long-message (read or CTS) protocol, which wants the buffers registered
    // (FI_MR_LOCAL in the reply). Eager messages must fit one device packet minus the
    // provider's headers, so keep ours under the common 8 KiB MTU of efa devices.
    l.staged_eager_bytes = std::min<uint64_t>(l.staged_eager_bytes, 4096);
  }
  // Until Open knows how this rank moves eager payloads (EagerOffer).
  l.eager_bytes = l.staged_eager_bytes;
  return l;
}

std::string OfiEndpoint::domain() const {
  const char* name = info_->domain_attr ? info_->domain_attr->name : nullptr;
  return name ? name : "?";
}

int64_t OfiEndpoint::nic_speed_mbps() const {
  // Bits per second; providers that do not know leave the nic (or its speed) unset.
  const fid_nic* nic = info_->nic;
  if (nic == nullptr || nic->link_attr == nullptr || nic->link_attr->speed == 0) return -1;
  const int64_t mbps = static_cast<int64_t>(nic->link_attr->speed / 1000000);
  return mbps > 0 ? mbps : -1;
}

void FiInfoDeleter::operator()(fi_info* i) const { Fabric().freeinfo(i); }

Result<std::shared_ptr<const ProviderOffer>> ProviderOffer::Find(int rank,
                                                                 const OpenOptions& options) {
  Result<std::vector<std::string>> pinned = ParseDomainList(GetEnv("WEFT_OFI_DOMAIN").value_or(""));
  if (!pinned.ok()) return pinned.status().WithContext(fmt::format("rank {}", rank));
  WEFT_ASSIGN_OR_RETURN(InfoPtr all, ProviderInfo(rank, options));
  std::shared_ptr<ProviderOffer> offer(new ProviderOffer());
  WEFT_ASSIGN_OR_RETURN(offer->ifs_, SelectedInterfaces(all.get()));
  offer->offered_ = OfferedDomains(all.get(), offer->ifs_);
  offer->pinned_ = std::move(pinned).value();
  offer->all_ = std::move(all);
  return std::shared_ptr<const ProviderOffer>(std::move(offer));
}

int ProviderOffer::domain_count() const {
  const size_t n = pinned_.empty() ? offered_.size() : pinned_.size();
  return std::max<int>(1, static_cast<int>(n));
}

Result<std::shared_ptr<OfiEndpoint>> OfiEndpoint::Open(int rank, const OpenOptions& options) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const ProviderOffer> offer,
                        ProviderOffer::Find(rank, options));
  return Open(rank, *offer, options.local_index);
}

Result<std::shared_ptr<OfiEndpoint>> OfiEndpoint::Open(int rank, const ProviderOffer& offer,
                                                       int local_index) {
  WEFT_ASSIGN_OR_RETURN(InfoPtr info, offer.PickDomain(rank, local_index));
  std::shared_ptr<OfiEndpoint> e(new OfiEndpoint());
  e->rank_ = rank;
  e->info_ = info.release();
  e->provider_ = e->info_->fabric_attr->prov_name ? e->info_->fabric_attr->prov_name : "?";
  e->limits_ = LimitsFor(e->info_);
  Result<long long> prepost = GetEnvInt("WEFT_OFI_PREPOST", e->limits_.prepost_payload ? 1 : 0);
  if (!prepost.ok()) return prepost.status();
  e->limits_.prepost_payload = prepost.value() != 0;
  e->limits_.recv_iov = e->limits_.prepost_payload && e->info_->rx_attr->iov_limit >= 2;
  TuneProvider(e->provider_);
  Result<long long> force_mr = GetEnvInt("WEFT_OFI_MR", 0);
  if (!force_mr.ok()) return force_mr.status();
  e->register_ = (e->info_->domain_attr->mr_mode & FI_MR_LOCAL) != 0 || force_mr.value() != 0;
  // Registering a small user buffer per send costs more than copying it into the staging
  // buffer, which is registered once.
  if (e->register_) e->limits_.send_iov = false;
  WEFT_ASSIGN_OR_RETURN(e->limits_.eager_bytes,
                        EagerOffer(e->limits_, e->info_->ep_attr->max_msg_size, rank));
  if (e->limits_.recv_iov && !e->register_ && e->info_->rx_attr->iov_limit >= 3 &&
      e->limits_.eager_bytes > 0) {
    // Room for all a peer's eager message can carry past a smaller expected one. Not
    // value-initialised: its pages stay untouched unless a mismatched call lands there.
    e->sink_bytes_ = e->limits_.eager_bytes;
    e->sink_.reset(new uint8_t[e->sink_bytes_]);
  }

  auto fail = [&](const char* what, int ret) {
    return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank, e->provider_, FiError(what, ret)));
  };
  int ret = Fabric().fabric(e->info_->fabric_attr, &e->fabric_, nullptr);
  if (ret) return fail("fi_fabric", ret);
  ret = fi_domain(e->fabric_, e->info_, &e->domain_, nullptr);
  if (ret) return fail("fi_domain", ret);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  ret = fi_av_open(e->domain_, &av_attr, &e->av_, nullptr);
  if (ret) return fail("fi_av_open", ret);
  WEFT_RETURN_IF_ERROR(e->OpenCompletionQueue());
  ret = fi_endpoint(e->domain_, e->info_, &e->ep_, nullptr);
  if (ret) return fail("fi_endpoint", ret);
  ret = fi_ep_bind(e->ep_, &e->av_->fid, 0);
  if (ret) return fail("fi_ep_bind(av)", ret);
  ret = fi_ep_bind(e->ep_, &e->cq_->fid, FI_TRANSMIT | FI_RECV);
  if (ret) return fail("fi_ep_bind(cq)", ret);
  ret = fi_enable(e->ep_);
  if (ret) return fail("fi_enable", ret);
  size_t len = 0;
  ret = fi_getname(&e->ep_->fid, nullptr, &len);
  if (ret != -FI_ETOOSMALL && ret != 0) return fail("fi_getname", ret);
  e->address_.resize(len);
  ret = fi_getname(&e->ep_->fid, e->address_.data(), &len);
  if (ret) return fail("fi_getname", ret);
  e->address_.resize(len);
  WEFT_INFO("rank {}: ofi provider {} (domain {}), eager up to {} B, chunk {} B{}{}{}", rank,
            e->provider_, e->info_->domain_attr->name ? e->info_->domain_attr->name : "?",
            e->limits_.eager_bytes, e->limits_.max_chunk,
            e->limits_.recv_iov ? ", eager payloads received in place" : "",
            e->register_ ? ", registering buffers" : "",
            e->wait_fd_ >= 0 ? ", completion queue fd" : ", no completion queue fd");
  return e;
}

Status OfiEndpoint::OpenCompletionQueue() {
  Result<long long> want_fd = GetEnvInt("WEFT_OFI_WAIT_FD", 1);
  if (!want_fd.ok()) return want_fd.status();
  fi_cq_attr attr{};
  attr.format = FI_CQ_FORMAT_TAGGED;
  if (want_fd.value() != 0) {
    // A file descriptor to sleep on, so that idle ranks leave the core to the ones with
    // work. A provider that cannot give one (or gives no fd for it) is polled by hand.
    attr.wait_obj = FI_WAIT_FD;
    int ret = fi_cq_open(domain_, &attr, &cq_, nullptr);
    if (ret == 0) {
      int fd = -1;
      ret = fi_control(&cq_->fid, FI_GETWAIT, &fd);
      if (ret == 0 && fd >= 0) {
        wait_fd_ = fd;
        return Status::Ok();
      }
      fi_close(&cq_->fid);
      cq_ = nullptr;
    }
    WEFT_INFO("rank {}: ofi ({}): no file descriptor for the completion queue ({}); idle "
              "ranks poll it instead", rank_, provider_, FiError("FI_WAIT_FD", ret));
  }
  attr.wait_obj = FI_WAIT_NONE;
  int ret = fi_cq_open(domain_, &attr, &cq_, nullptr);
  if (ret)
    return Unavailable(
        fmt::format("rank {}: ofi ({}): {}", rank_, provider_, FiError("fi_cq_open", ret)));
  return Status::Ok();
}

int OfiEndpoint::WaitFd() {
  if (wait_fd_ < 0) return -1;
  fid* fids[1] = {&cq_->fid};
  return fi_trywait(fabric_, fids, 1) == FI_SUCCESS ? wait_fd_ : -1;
}

OfiEndpoint::~OfiEndpoint() {
  // Endpoint first: nothing completes into the CQ afterwards.
  if (ep_) fi_close(&ep_->fid);
  for (auto& r : requests_)
    if (r->mr) fi_close(&r->mr->fid);
  for (Slab& s : slabs_)
    if (s.mr) fi_close(&s.mr->fid);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) Fabric().freeinfo(info_);
}

Status OfiEndpoint::InsertPeers(const std::vector<std::vector<uint8_t>>& addrs) {
  peer_addrs_.assign(addrs.size(), FI_ADDR_UNSPEC);
  for (size_t r = 0; r < addrs.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    int n = fi_av_insert(av_, addrs[r].data(), 1, &peer_addrs_[r], 0, nullptr);
    if (n != 1) {
      return Unavailable(fmt::format("rank {}: ofi ({}): inserting the address of rank {}: {}",
                                     rank_, provider_, r, FiError("fi_av_insert", n < 0 ? n : -FI_EINVAL)));
    }
  }
  return Status::Ok();
}

Request* OfiEndpoint::NewRequest(OfiLink* link, void* entry, int part) {
  Request* r;
  if (free_requests_.empty()) {
    requests_.push_back(std::make_unique<Request>());
    r = requests_.back().get();
  } else {
    r = free_requests_.back();
    free_requests_.pop_back();
  }
  std::memset(&r->ctx, 0, sizeof(r->ctx));
  r->link = link;
  r->entry = entry;
  r->part = part;
  r->mr = nullptr;
  return r;
}

void OfiEndpoint::Release(Request* r) {
  if (r->mr) fi_close(&r->mr->fid);
  r->mr = nullptr;
  r->link = nullptr;
  r->entry = nullptr;
  free_requests_.push_back(r);
}

Result<int> OfiEndpoint::Poll() {
  int handled = 0;
  while (true) {
    fi_cq_tagged_entry cqe[kCqBatch];
    ssize_t n = fi_cq_read(cq_, cqe, kCqBatch);
    if (n == -FI_EAGAIN) return handled;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      ssize_t r = fi_cq_readerr(cq_, &err, 0);
      if (r < 0) {
        if (r == -FI_EAGAIN) continue;
        return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank_, provider_,
                                       FiError("fi_cq_readerr", static_cast<int>(r))));
      }
      Request* req = static_cast<Request*>(err.op_context);
      std::string why = fmt::format(
          "{} ({}){}{}", Fabric().strerror(err.err), err.err,
          err.prov_errno ? fmt::format(", provider: {}", fi_cq_strerror(cq_, err.prov_errno,
                                                                       err.err_data, nullptr, 0))
                         : "",
          err.err == FI_ETRUNC ? " (the peer sent a larger message than expected)" : "");
      if (req == nullptr)
        return Unavailable(fmt::format("rank {}: ofi ({}): completion error: {}", rank_,
                                       provider_, why));
      if (req->link) req->link->OnError(req, err.err, why);
      Release(req);
      ++handled;
      continue;
    }
    if (n < 0)
      return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank_, provider_,
                                     FiError("fi_cq_read", static_cast<int>(n))));
    for (ssize_t i = 0; i < n; ++i) {
      Request* req = static_cast<Request*>(cqe[i].op_context);
      if (req == nullptr) continue;
      if (req->link) req->link->OnComplete(req, cqe[i].len);
      Release(req);
      ++handled;
    }
  }
}

Result<fid_mr*> OfiEndpoint::Register(const void* ptr, size_t len) {
  // Without FI_MR_PROV_KEY the application picks the keys, unique per domain.
  uint64_t key = (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) ? 0 : next_key_++;
  fid_mr* mr = nullptr;
  int ret = fi_mr_reg(domain_, ptr, len, FI_SEND | FI_RECV, 0, key, 0, &mr, nullptr);
  if (ret)
    return Unavailable(fmt::format("rank {}: ofi ({}): registering {} bytes: {}", rank_, provider_,
                                   len, FiError("fi_mr_reg", ret)));
  return mr;
}

Result<void*> OfiEndpoint::RegisterFor(Request* req, const void* ptr, size_t len) {
  if (!register_ || len == 0) return nullptr;
  WEFT_ASSIGN_OR_RETURN(req->mr, Register(ptr, len));
  return fi_mr_desc(req->mr);
}

Result<Staging> OfiEndpoint::AcquireStaging() {
  if (free_staging_.empty()) {
    size_t each = (staging_bytes() + 63) / 64 * 64;
    Slab slab;
    slab.bytes.reset(new uint8_t[each * kSlabBuffers]);
    void* desc = nullptr;
    if (register_) {
      Result<fid_mr*> mr = Register(slab.bytes.get(), each * kSlabBuffers);
      if (!mr.ok()) return mr.status().WithContext("staging buffers");
      slab.mr = mr.value();
      desc = fi_mr_desc(slab.mr);
    }
    for (size_t i = 0; i < kSlabBuffers; ++i)
      free_staging_.push_back(Staging{slab.bytes.get() + i * each, desc});
    slabs_.push_back(std::move(slab));
  }
  Staging s = free_staging_.back();
  free_staging_.pop_back();
  return s;
}

void OfiEndpoint::ReleaseStaging(Staging s) {
  if (s.data) free_staging_.push_back(s);
}

}  // namespace weft::transport::ofi
