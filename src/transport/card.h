// The card each rank publishes during Mesh::Connect: who it is, which host it runs on
// and where it listens for tcp. Cards are text, one field per line, and decoding is
// strict (exact field order, no extra lines, every address parses), because a card
// comes from another process and a garbled one must fail loudly here rather than as a
// confusing connection error later.
//
//   weft-card 1
//   rank 3 size 4 comm 00000000deadbeef mode auto
//   host myhost|5f1c...|net:[4026531840]
//   tcp 10.0.0.2:4312 127.0.0.1:4312        (no addresses: just "tcp")
//   tcp 10.0.0.2:4312 10.0.1.2:4312 127.0.0.1:4312 rails 2 stripe-min 262144
//                                            (multi-rail: the first 2 addresses are rails)
//   ofi tcp;ofi_rxm 0a1b2c... eager 1048576
//   ofi efa 0a1b...,0c2d... eager 4096       (with WEFT_TRANSPORT=ofi or shm+ofi, or auto
//                                             when this rank found a fabric: the libfabric
//                                             provider, the address of each endpoint in
//                                             hex, one per rail (WEFT_OFI_NRAILS), and the
//                                             largest payload the rank takes inside a
//                                             header's message; a link uses the smaller of
//                                             its two ranks')
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/socket.h"
#include "transport/transport_mode.h"

namespace weft::transport {

struct Card {
  int rank = 0;
  int size = 0;
  uint64_t comm_id = 0;
  TransportMode mode = TransportMode::kAuto;
  std::string host_id;             // no whitespace
  std::vector<net::SockAddr> tcp;  // numeric addresses with port, in preference order
  // Multi-rail (tcp/rails.h): the first tcp_rails addresses are this rank's rails, and it
  // stripes messages of stripe_min bytes or more. Encoded only when tcp_rails > 1.
  int tcp_rails = 1;
  uint64_t stripe_min = 0;
  std::string ofi_provider;        // empty: no ofi line
  // Each endpoint's fi_getname() bytes, one endpoint per rail (NIC), rail 0 first.
  std::vector<std::vector<uint8_t>> ofi_addrs;
  uint64_t ofi_eager = 0;          // ofi::ProviderLimits::eager_bytes
};

std::string EncodeCard(const Card& card);
// ProtocolError describing the first problem found.
Result<Card> DecodeCard(const std::string& text);

// What the card's rank will run: its mode, except that auto with an ofi line (the rank
// found a real fabric, ofi::AutoPicksProvider) is kShmOfi. Every rank computes it from
// every card, so all ranks agree or all see the difference.
TransportMode ResolvedMode(const Card& card);
// For messages: "tcp", "shm+ofi", "auto (shm+ofi over efa)", "auto (shm+tcp, no fabric)".
std::string DescribeMode(const Card& card);

}  // namespace weft::transport
