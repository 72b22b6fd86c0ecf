// Routes and capacities of the cluster model (see cluster.h).
#include "sim/cluster.h"

#include <fmt/format.h>

#include <algorithm>

namespace weft::sim {
namespace {

// The first rank of the NIC group that rank `r` sends and receives through.
int NicOwner(const ClusterSpec& s, int r) {
  const int g = s.accels_per_host;
  const int host_base = (r / g) * g;
  if (s.nic_policy == NicPolicy::kStripe) return host_base;
  const int local = r % g;
  if (s.nics_per_host >= g) return r;  // the accelerator owns nics/g NICs alone
  // nics < g: accelerators [k*g/nics, (k+1)*g/nics) share NIC k.
  const int nic = static_cast<int>(static_cast<long long>(local) * s.nics_per_host / g);
  const int first_local = (nic * g + s.nics_per_host - 1) / s.nics_per_host;
  return host_base + first_local;
}

int LeafOwner(const ClusterSpec& s, int r) {
  const int per_leaf = s.accels_per_host * s.hosts_per_leaf;
  return (r / per_leaf) * per_leaf;
}

}  // namespace

Status Validate(const ClusterSpec& s) {
  if (s.hosts < 1 || s.accels_per_host < 1 || s.nics_per_host < 1) {
    return InvalidArgument(
        fmt::format("cluster {}: hosts, accelerators and NICs per host must "
                    "be positive (got {}, {}, {})",
                    s.name, s.hosts, s.accels_per_host, s.nics_per_host));
  }
  if (!(s.intra_bytes_per_s > 0) || !(s.nic_bytes_per_s > 0)) {
    return InvalidArgument(fmt::format("cluster {}: bandwidths must be positive", s.name));
  }
  if (s.intra_alpha_s < 0 || s.inter_alpha_s < 0 || s.reduce_s_per_byte < 0 ||
      s.copy_s_per_byte < 0) {
    return InvalidArgument(fmt::format("cluster {}: latencies and costs must be >= 0", s.name));
  }
  if (s.oversubscription < 1.0) {
    return InvalidArgument(
        fmt::format("cluster {}: oversubscription {} < 1", s.name, s.oversubscription));
  }
  if (s.models_leaves() && (s.hosts_per_leaf < 1 || s.hosts % s.hosts_per_leaf != 0)) {
    return InvalidArgument(
        fmt::format("cluster {}: {} hosts do not fill whole leaves of {} hosts; the model assumes "
                    "every leaf is full",
                    s.name, s.hosts, s.hosts_per_leaf));
  }
  if (static_cast<long long>(s.hosts) * s.accels_per_host > (1 << 30)) {
    return InvalidArgument(fmt::format("cluster {}: too many ranks", s.name));
  }
  return Status::Ok();
}

double CapacityOf(const ClusterSpec& s, ResourceKind kind) {
  const double host_nic = s.nic_bytes_per_s * s.nics_per_host;
  switch (kind) {
    case ResourceKind::kIntraEgress:
    case ResourceKind::kIntraIngress:
      return s.intra_bytes_per_s;
    case ResourceKind::kNicEgress:
    case ResourceKind::kNicIngress:
      if (s.nic_policy == NicPolicy::kStripe) return host_nic;
      // A group is one NIC, or nics/accels NICs owned by one accelerator.
      return s.nic_bytes_per_s * std::max(1, s.nics_per_host / s.accels_per_host);
    case ResourceKind::kLeafUp:
    case ResourceKind::kLeafDown:
      return host_nic * s.hosts_per_leaf / s.oversubscription;
  }
  return 0;
}

Route RouteOf(const ClusterSpec& s, int src, int dst) {
  Route route;
  const int g = s.accels_per_host;
  auto add = [&](ResourceKind kind, int owner) { route.hops[route.num_hops++] = {kind, owner}; };
  if (src / g == dst / g) {
    route.alpha_s = s.intra_alpha_s;
    add(ResourceKind::kIntraEgress, src);
    add(ResourceKind::kIntraIngress, dst);
    return route;
  }
  route.alpha_s = s.inter_alpha_s;
  add(ResourceKind::kNicEgress, NicOwner(s, src));
  add(ResourceKind::kNicIngress, NicOwner(s, dst));
  if (s.models_leaves() && LeafOwner(s, src) != LeafOwner(s, dst)) {
    add(ResourceKind::kLeafUp, LeafOwner(s, src));
    add(ResourceKind::kLeafDown, LeafOwner(s, dst));
  }
  return route;
}

}  // namespace weft::sim
