// The ofi part of Mesh::Connect: this rank's endpoints (one per rail, WEFT_OFI_NRAILS),
// opened before the cards are exchanged since their addresses go in the card, then the
// links to the peers the mesh gives ofi (a RailLink over several rails).
//
// Free of libfabric, so that Mesh::Connect is the same code in every build: with
// WEFT_OFI=OFF the build leaves the rest of this folder out and src/transport/ofi_off.cc
// implements this class instead (no endpoints; Connect refuses).
#pragma once

#include <memory>
#include <vector>

#include "core/status.h"
#include "transport/link.h"
#include "transport/transport_mode.h"
#include "transport/used_links.h"

namespace weft::transport {
struct Card;
}  // namespace weft::transport

namespace weft::transport::ofi {

class OfiEndpoint;

class RailSetup {
 public:
  // Opens this rank's endpoints for mine->mode and writes their provider, addresses and
  // eager size into `mine`: for ofi and shm+ofi strictly (a failure is the
  // communicator's); for auto as a probe that never fails the communicator nor slows a
  // machine without a fabric (libfabric is not even loaded unless an RDMA device exists,
  // and only a real fabric provider is taken). Opens none, and leaves `mine` as it is,
  // for a single rank, for tcp and shm, and for auto that found no fabric (auto then
  // runs shm+tcp). `local_index`, `local_size`: MeshOptions'. Blocking.
  Status Open(int local_index, int local_size, Card* mine);
  // Makes the ofi links of the pairs that use ofi in `mode` (resolved: UsesOfi) over the
  // endpoints Open opened, and sets (*links)[peer] to each; `cards` are every rank's, as
  // exchanged. InvalidUsage when the ranks' providers differ.
  Status Connect(TransportMode mode, const Card& mine, const std::vector<Card>& cards,
                 std::vector<std::unique_ptr<Link>>* links);
  // After Connect, when some peer is on another host: each rail's domain (Mesh::UsedLinks).
  const std::vector<OfiDomain>& domains() const { return domains_; }

 private:
  std::vector<std::shared_ptr<OfiEndpoint>> endpoints_;  // rail 0 first
  std::vector<OfiDomain> domains_;
};

}  // namespace weft::transport::ofi
