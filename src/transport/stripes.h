// How a message is cut across the rails (paths) of a pair of ranks, for any transport:
// both ends cut alike from the message length alone, so a stripe needs no offset on the
// wire. Used by RailLink (rail_link.h) over tcp connections (tcp/rails.h) and over ofi
// endpoints on several NICs (docs/TRANSPORTS.md, multi-rail).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace weft::transport {

// A bound on rails per pair that catches typos; no host has more NICs per rank than this.
inline constexpr int kMaxRails = 16;
// Stripes start at multiples of this (page-aligned relative to the buffer).
inline constexpr uint64_t kStripeAlign = 4096;

// The rails of a pair: 1 on one host (loopback is one path), else the smaller offer.
inline int PairRails(bool same_host, int mine, int peer) {
  return same_host ? 1 : (mine < peer ? mine : peer);
}

// A rail-count setting (WEFT_SOCKET_NRAILS, WEFT_OFI_NRAILS), named `variable` in the
// error: "auto", unset or empty give 0 (the transport decides); else 1..kMaxRails.
// InvalidArgument otherwise.
Result<int> ParseRailCount(std::string_view variable, std::string_view value);

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

}  // namespace weft::transport
