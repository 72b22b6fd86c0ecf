// Multi-rail tcp (docs/TRANSPORTS.md): a pair of ranks on different hosts with several
// network interfaces each ("rails") opens one connection per rail, local rail i to the
// peer's rail i, and cuts every message of at least the stripe minimum into one stripe
// per rail. Both ends compute the cut from the message length alone, so a stripe needs
// no offset on the wire: its header (the message's, with `bytes` = the stripe's length)
// is checked as usual and its payload is read straight into place.
//
// Pure functions and environment parsing only; the link is transport/rail_link.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/socket.h"
#include "transport/stripes.h"

namespace weft::transport::tcp {

// Messages from this many bytes on are striped (WEFT_TCP_STRIPE_MIN). Below it the extra
// header and syscalls per rail cost more than the second path gives.
inline constexpr uint64_t kDefaultStripeMin = 256 << 10;
// The cut itself (PlanStripes) and the pair's rail count are transport/stripes.h.
using transport::kMaxRails;
using transport::kStripeAlign;
using transport::PairRails;
using transport::PlanStripes;
using transport::Stripe;

// WEFT_SOCKET_NRAILS: "auto" (default) or 1..kMaxRails. 0 stands for auto.
Result<int> RailsWantedFromEnv();
// WEFT_TCP_STRIPE_MIN: bytes, at least 1; default kDefaultStripeMin.
Result<uint64_t> StripeMinFromEnv();

// How many rails this rank offers, given the non-loopback addresses it advertises (one
// per selected interface, in selection order) and the settings. `wanted` 0 (auto): every
// advertised interface when `ifname_spec` is an explicit include list (e.g. "rail" or
// "=eth0,eth1"), else 1 — the default rules select whatever interface is up, which may be
// a network the peers cannot reach. `wanted` N: min(N, addresses). Never less than 1.
int LocalRailCount(int wanted, const std::string& ifname_spec, size_t routable_addrs);

// The order in which to try a peer's addresses for its rail `rail`: that rail's address
// first, then the peer's other routable addresses (so a rail that does not route still
// connects, over another path; the connecting rank warns). `addrs` are the peer's
// routable addresses in its advertised order.
std::vector<net::SockAddr> RailAddresses(const std::vector<net::SockAddr>& addrs, int rail);

}  // namespace weft::transport::tcp
