// The model of a cluster: identical hosts of accelerators, an intra-node fabric, NICs,
// and a switch fabric between hosts. Ranks are placed in blocks: rank r runs on
// accelerator r % accels_per_host of host r / accels_per_host (what torchrun, Slurm
// and weftrun do by default).
//
// Every message crosses a short list of *resources*, each a capacity shared max-min
// fairly among the messages crossing it at the same time (sim/fluid.h):
//   same host:  the sender accelerator's intra-node egress port, the receiver's ingress
//               port (NVSwitch / NeuronLink class fabrics are modelled as a crossbar:
//               per-accelerator ports are the only limit);
//   other host: the egress of the sender's NIC group, the ingress of the receiver's NIC
//               group and, when the fabric is oversubscribed and the hosts sit under
//               different leaves, the sender leaf's uplink and the receiver leaf's
//               downlink.
// A NIC group is what one rank's traffic can use: with NicPolicy::kRail, accelerator g
// uses NIC g*nics/accels (several accelerators share one NIC when nics < accels, one
// accelerator owns nics/accels NICs when there are more); with kStripe every rank's
// traffic is spread over all NICs of its host (one shared host-wide resource), as a
// transport that stripes messages across NICs would.
// The fabric above the NICs is non-blocking (a fat tree at full bisection; a
// rail-optimised fabric is the same thing for rail-aligned traffic) unless
// oversubscription > 1, when each leaf of hosts_per_leaf hosts has an uplink of
// hosts_per_leaf * host NIC bandwidth / oversubscription in each direction.
#pragma once

#include <array>
#include <string>

#include "core/status.h"
#include "sim/fluid.h"

namespace weft::sim {

enum class NicPolicy { kRail, kStripe };

struct ClusterSpec {
  std::string name;  // for reports, e.g. "p4d.24xlarge"
  int hosts = 1;
  int accels_per_host = 1;
  // Intra-node fabric, per accelerator and per direction.
  double intra_bytes_per_s = 150e9;
  // The latency of a message inside a host, and also the CPU time a rank spends on each
  // message it posts in a round beyond its first send and first receive (LogP's "o"; see
  // message_overhead_s). One figure for both because it is the one the planner's cost
  // model charges per extra message (sched/cost_model.cc, MessagesUs, which PlannerCostsFor
  // hands intra_alpha_us): the simulator and the planner must weigh a many-message round
  // alike, or the planner picks algorithms the simulator finds slow (issue 7).
  double intra_alpha_s = 2e-6;
  // NICs, per host; bandwidth per NIC and per direction.
  int nics_per_host = 1;
  double nic_bytes_per_s = 12.5e9;
  double inter_alpha_s = 10e-6;
  NicPolicy nic_policy = NicPolicy::kRail;
  // Fabric above the NICs.
  double oversubscription = 1.0;  // 1: non-blocking
  int hosts_per_leaf = 1;         // used only when oversubscription > 1
  // Device costs: seconds per byte for an elementwise reduction (gamma) and for a
  // local copy, on the accelerator that runs the schedule's local steps.
  double reduce_s_per_byte = 0;
  double copy_s_per_byte = 0;

  int ranks() const { return hosts * accels_per_host; }
  // Per-message endpoint overhead, seconds: see intra_alpha_s.
  double message_overhead_s() const { return intra_alpha_s; }
  bool models_leaves() const { return oversubscription > 1.0 && hosts > hosts_per_leaf; }
};

// Checks that the figures make a usable model (positive sizes and bandwidths, hosts a
// multiple of hosts_per_leaf when leaves are modelled, ...).
Status Validate(const ClusterSpec& spec);

enum class ResourceKind : uint8_t {
  kIntraEgress = 0,  // owner: the accelerator's rank
  kIntraIngress,
  kNicEgress,  // owner: the first rank of the NIC group
  kNicIngress,
  kLeafUp,  // owner: the first rank of the leaf
  kLeafDown,
};

// A resource instance, named by its kind and the rank that owns it. Naming by an owner
// rank lets a rank symmetry (sim/symmetry.h) map resources to their equivalence class.
struct ResourceRef {
  ResourceKind kind;
  int owner;
};

struct Route {
  double alpha_s = 0;
  std::array<ResourceRef, kMaxHops> hops{};
  int num_hops = 0;
};

// The route of a message from rank `src` to rank `dst` (src != dst).
Route RouteOf(const ClusterSpec& spec, int src, int dst);
// The capacity of a resource of `kind`, bytes/s.
double CapacityOf(const ClusterSpec& spec, ResourceKind kind);

}  // namespace weft::sim
