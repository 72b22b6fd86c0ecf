// The choices the ofi transport makes from names alone, kept free of libfabric so that
// they are tested without it: whether WEFT_TRANSPORT=auto should use a provider, and
// which of a provider's domains (NICs) a rank opens its endpoint on, and on how many.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace weft::transport::ofi {

// Whether WEFT_TRANSPORT=auto takes the ofi transport between hosts when `provider` is
// the one libfabric offers first: true for real fabrics (efa, verbs;ofi_rxm), whose
// kernel-bypass NICs beat weft's own tcp; false for everything that runs over the
// kernel's sockets or memory (tcp;ofi_rxm, udp, shm, sockets), where weft's tcp and shm
// links are as fast or faster (docs/TRANSPORTS.md, "Speed over tcp;ofi_rxm").
bool AutoPicksProvider(std::string_view provider);

// Whether this machine has an RDMA device: efa and verbs NICs both register one under
// <sys_class>/infiniband (net::kSysClassDir). WEFT_TRANSPORT=auto loads libfabric only
// then, so that machines without a fabric start as they always did. Blocking (readdir).
bool RdmaDevicePresent(const std::string& sys_class);

// The names of WEFT_OFI_DOMAIN ("rdmap16s27-rdm,rdmap32s27-rdm"): empty for an unset or
// empty value; InvalidArgument for an empty item ("a,,b").
Result<std::vector<std::string>> ParseDomainList(std::string_view value);

// A kernel CPU list ("0-3,8,10-11", as in sysfs local_cpulist), sorted and without
// duplicates; nullopt when malformed.
std::optional<std::vector<int>> ParseCpuList(std::string_view text);

// The CPUs next to a domain's NIC (its PCIe root's NUMA node), from sysfs under
// `sys_class`: efa domains ("rdmap16s27-rdm", "-dgrm") and verbs ones ("mlx5_0") name an
// RDMA device, <sys_class>/infiniband/<device>/device/local_cpulist; IP providers' name
// an interface, <sys_class>/net/<name>/device/local_cpulist. Empty when unknown (a
// virtual interface has no device; no sysfs). Blocking (reads files).
std::vector<int> NicLocalCpus(const std::string& sys_class, std::string_view domain);

// The domains near a rank that may run on `my_cpus` (its affinity mask): those whose
// NIC's CPUs (`nic_cpus[i]` for `offered[i]`; empty: unknown) include one of them. All of
// `offered` when none is near or nothing is known, so a rank never loses its NICs; and
// when the rank is not bound (its CPUs touch every NIC) the result is `offered` itself.
std::vector<std::string> NearDomains(const std::vector<std::string>& offered,
                                     const std::vector<std::vector<int>>& nic_cpus,
                                     const std::vector<int>& my_cpus);

// The domain a rank opens its endpoint on: item `local_index % D` of the D domains to
// use, which are `pinned` (WEFT_OFI_DOMAIN's names, in that order) when given, else
// `offered` (the provider's domains, in the order libfabric lists them, duplicates
// dropped). So the local ranks of a host spread over its NICs, round robin.
// InvalidArgument when nothing is offered, or when a pinned name is not offered (the
// message quotes what is). `local_index` < 0 counts as 0.
Result<std::string> ChooseDomain(const std::vector<std::string>& offered,
                                 const std::vector<std::string>& pinned, int local_index);

// The rails (endpoints, each on its own domain) a rank opens for WEFT_OFI_NRAILS=auto:
// the host's `domains` shared evenly among its `local_ranks` (the launcher's local world
// size; <= 0 when unknown), rounded down so that no two local ranks share a NIC, and at
// least 1, at most `max_rails`. A p5 (32 EFA domains, 8 ranks) gets 4 rails a rank, a
// p4d (4 domains, 8 ranks) 1. Unknown local ranks: 1 (every rank might be on one host).
int AutoOfiRails(int domains, int local_ranks, int max_rails);

}  // namespace weft::transport::ofi
