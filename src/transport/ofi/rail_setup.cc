// The ofi part of Mesh::Connect (rail_setup.h).
#include "transport/ofi/rail_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/env.h"
#include "core/log.h"
#include "net/link_speed.h"
#include "transport/card.h"
#include "transport/ofi/nic_choice.h"
#include "transport/ofi/ofi_endpoint.h"
#include "transport/ofi/ofi_link.h"
#include "transport/rail_link.h"
#include "transport/stripes.h"
#include "transport/tcp/rails.h"

namespace weft::transport::ofi {
namespace {

using Endpoints = std::vector<std::shared_ptr<OfiEndpoint>>;

// ofi messages from this size on are striped over a pair's rails. A constant, because
// both ends must cut alike; tcp's default (WEFT_TCP_STRIPE_MIN), for the same reason:
// below it a stripe's message costs more than the second path gives.
constexpr uint64_t kOfiStripeMin = tcp::kDefaultStripeMin;

// WEFT_OFI_NRAILS: endpoints (NICs) per rank that each pair stripes over, 1..kMaxRails;
// "auto" (the default): the host's domains shared among its local ranks (AutoOfiRails).
Result<int> OfiRails(int rank, int local_size, const ProviderOffer& offer) {
  Result<int> wanted = ParseRailCount("WEFT_OFI_NRAILS", GetEnv("WEFT_OFI_NRAILS").value_or(""));
  if (!wanted.ok()) return wanted.status().WithContext(fmt::format("rank {}", rank));
  if (wanted.value() > 0) return wanted.value();
  const int domains = offer.domain_count();
  const int rails = AutoOfiRails(domains, local_size, kMaxRails);
  WEFT_INFO("rank {}: WEFT_OFI_NRAILS=auto: {} rail{} ({} domain{}, {} local rank{})", rank, rails,
            rails == 1 ? "" : "s", domains, domains == 1 ? "" : "s",
            local_size > 0 ? std::to_string(local_size) : "unknown", local_size == 1 ? "" : "s");
  return rails;
}

// Rail k of the rank with local index i opens its endpoint on domain slot i*R + k (mod
// the domains: ChooseDomain), so the local ranks' rails cover the NICs in turn. A local
// index < 0 (unknown) is replaced by the rank: ranks on a host are usually consecutive.
Result<Endpoints> OpenRails(int rank, int local_index, int local_size, const OpenOptions& eo) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const ProviderOffer> offer, ProviderOffer::Find(rank, eo));
  WEFT_ASSIGN_OR_RETURN(int rails, OfiRails(rank, local_size, *offer));
  const int local = local_index >= 0 ? local_index : rank;
  Endpoints out;
  for (int k = 0; k < rails; ++k) {
    Result<std::shared_ptr<OfiEndpoint>> e = OfiEndpoint::Open(rank, *offer, local * rails + k);
    if (!e.ok())
      return rails == 1 ? e.status()
                        : e.status().WithContext(fmt::format("rail {} of {}", k, rails));
    out.push_back(std::move(e).value());
  }
  return out;
}

// For auto: efa and verbs NICs both appear under /sys/class/infiniband, so without one
// there is no fabric to find and libfabric is not loaded; with one, a failure to open is
// only logged (the ranks then run shm+tcp, or fail the mode check if others did find it).
Result<Endpoints> OpenEndpoints(int local_index, int local_size, const Card& mine) {
  if (mine.size == 1) return Endpoints();
  OpenOptions eo;
  if (mine.mode == TransportMode::kOfi || mine.mode == TransportMode::kShmOfi)
    return OpenRails(mine.rank, local_index, local_size, eo);
  if (mine.mode != TransportMode::kAuto || !RdmaDevicePresent(net::kSysClassDir))
    return Endpoints();
  eo.fabric_only = true;
  Result<Endpoints> e = OpenRails(mine.rank, local_index, local_size, eo);
  if (e.ok()) return e;
  WEFT_INFO("rank {}: WEFT_TRANSPORT=auto: no fabric for ofi ({}); shm and tcp", mine.rank,
            e.status().message());
  return Endpoints();
}

// Every rank has the same provider (or the ranks would not reach each other) and
// endpoints (their addresses are in its card).
Status CheckProviders(const Card& mine, const std::vector<Card>& cards) {
  for (const Card& c : cards) {
    if (c.ofi_provider != mine.ofi_provider || c.ofi_addrs.empty()) {
      return InvalidUsage(fmt::format(
          "rank {} uses the ofi provider '{}' but rank {} uses '{}' (set WEFT_OFI_PROVIDER to the "
          "same value on every rank)",
          mine.rank, mine.ofi_provider, c.rank, c.ofi_provider));
    }
  }
  return Status::Ok();
}

}  // namespace

Status RailSetup::Open(int local_index, int local_size, Card* mine) {
  WEFT_ASSIGN_OR_RETURN(endpoints_, OpenEndpoints(local_index, local_size, *mine));
  if (endpoints_.empty()) return Status::Ok();
  mine->ofi_provider = endpoints_[0]->provider();
  mine->ofi_eager = endpoints_[0]->limits().eager_bytes;
  for (const auto& e : endpoints_) {
    mine->ofi_addrs.push_back(e->address());
    mine->ofi_eager = std::min(mine->ofi_eager, e->limits().eager_bytes);
  }
  return Status::Ok();
}

// A pair on two hosts stripes over the rails both have (RailLink); one on the same host
// uses rail 0 alone.
Status RailSetup::Connect(TransportMode mode, const Card& mine, const std::vector<Card>& cards,
                          std::vector<std::unique_ptr<Link>>* links) {
  WEFT_RETURN_IF_ERROR(CheckProviders(mine, cards));
  const int self = mine.rank;
  const bool remote = std::any_of(cards.begin(), cards.end(),
                                  [&](const Card& c) { return c.host_id != mine.host_id; });
  for (size_t k = 0; k < endpoints_.size(); ++k) {
    // Rail k's endpoint reaches each peer's rail k (its last one, for a peer with fewer:
    // an address that pair never uses, so that the table is indexed by rank).
    std::vector<std::vector<uint8_t>> addrs(cards.size());
    for (size_t r = 0; r < cards.size(); ++r)
      addrs[r] = cards[r].ofi_addrs[std::min(k, cards[r].ofi_addrs.size() - 1)];
    WEFT_RETURN_IF_ERROR(endpoints_[k]->InsertPeers(addrs));
    if (remote) domains_.push_back({endpoints_[k]->domain(), endpoints_[k]->nic_speed_mbps()});
  }
  for (int r = 0; r < static_cast<int>(cards.size()); ++r) {
    const bool same_host = cards[r].host_id == mine.host_id;
    if (r == self || !UsesOfi(mode, same_host)) continue;
    const uint64_t eager = std::min(mine.ofi_eager, cards[r].ofi_eager);
    const int n = PairRails(same_host, static_cast<int>(endpoints_.size()),
                            static_cast<int>(cards[r].ofi_addrs.size()));
    if (n == 1) {
      (*links)[r] = std::make_unique<OfiLink>(self, r, endpoints_[0], eager);
      continue;
    }
    std::vector<std::unique_ptr<Link>> rails;
    for (int k = 0; k < n; ++k)
      rails.push_back(std::make_unique<OfiLink>(self, r, endpoints_[k], eager));
    WEFT_ASSIGN_OR_RETURN((*links)[r], RailLink::Create(self, r, std::move(rails), kOfiStripeMin));
    WEFT_INFO("rank {}: {} ofi rails to rank {}, messages of {} bytes or more striped", self, n, r,
              kOfiStripeMin);
  }
  return Status::Ok();
}

}  // namespace weft::transport::ofi
