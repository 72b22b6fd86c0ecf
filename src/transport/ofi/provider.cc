// The ofi transport's provider: which one (WEFT_OFI_PROVIDER, else the first of
// kAutoProviders), its domains (provider.h), the limits an endpoint on it respects, and
// the libfabric settings weft changes for it.
#include "transport/ofi/provider.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/env.h"
#include "core/log.h"
#include "net/link_speed.h"
#include "transport/ofi/fabric_lib.h"
#include "transport/ofi/nic_choice.h"

namespace weft::transport::ofi {
namespace {

constexpr uint32_t kFiVersion = FI_VERSION(1, 10);
// Providers tried in order when WEFT_OFI_PROVIDER is not set.
constexpr const char* kAutoProviders[] = {"efa", "verbs;ofi_rxm", "tcp;ofi_rxm"};
// The eager size of a rank that sends from and receives into the user's buffer. Above it
// an op's payload follows its header as a message of its own, a cost that is small
// beside the payload's own time there. It is also the size of the overflow sink (room
// for all a mismatched call's eager message carries past the expected size, so that its
// header is read and the error names both calls), allocated once per endpoint.
constexpr uint64_t kInPlaceEagerBytes = uint64_t{1} << 20;

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

}  // namespace weft::transport::ofi
