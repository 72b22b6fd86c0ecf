// Multi-rail tcp (docs/TRANSPORTS.md): a pair of ranks on different hosts with several
// network interfaces each ("rails") opens one connection per rail, local rail i to the
// peer's rail i, and cuts every message of at least the stripe minimum into one stripe
// per rail. Both ends compute the cut from the message length alone, so a stripe needs
// no offset on the wire: its header (the message's, with `bytes` = the stripe's length)
// is checked as usual and its payload is read straight into place.
//
// Pure functions and environment parsing only; the link is rail_link.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/socket.h"

namespace weft::transport::tcp {

// A bound on WEFT_SOCKET_NRAILS that catches typos; no host has more NICs than this.
inline constexpr int kMaxRails = 16;
// Messages from this many bytes on are striped (WEFT_TCP_STRIPE_MIN). Below it the extra
// header and syscalls per rail cost more than the second path gives.
inline constexpr uint64_t kDefaultStripeMin = 256 << 10;
// Stripes start at multiples of this (page-aligned relative to the buffer).
inline constexpr uint64_t kStripeAlign = 4096;

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

// The rails of a pair: 1 on one host (loopback is one path), else the smaller offer.
inline int PairRails(bool same_host, int mine, int peer) {
  return same_host ? 1 : (mine < peer ? mine : peer);
}

struct Stripe {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Cuts a message of `bytes` for `rails` rails into out[0..n), returning n: the whole
// message on rail 0 when rails == 1 or bytes < stripe_min; otherwise stripe k on rail k,
// the first ones ceil(bytes / rails) rounded up to kStripeAlign, the last the remainder
// (trailing empty stripes are dropped, so n may be less than rails). `out` has room for
// `rails` entries. Deterministic: sender and receiver cut alike.
int PlanStripes(uint64_t bytes, int rails, uint64_t stripe_min, Stripe* out);

// The order in which to try a peer's addresses for its rail `rail`: that rail's address
// first, then the peer's other routable addresses (so a rail that does not route still
// connects, over another path; the connecting rank warns). `addrs` are the peer's
// routable addresses in its advertised order.
std::vector<net::SockAddr> RailAddresses(const std::vector<net::SockAddr>& addrs, int rail);

}  // namespace weft::transport::tcp
