// The network links a rank uses to reach ranks on other hosts (its NICs, as far as this
// rank can tell), with their speeds: what the planner's inter-host figures are detected
// from (comm/link_figures.h agrees on them across ranks). A link is named by what
// carries the traffic: a tcp interface ("eth0"), or an ofi domain ("ofi:rdmap16s27-rdm").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/socket.h"

namespace weft::transport {

struct UsedLink {
  std::string name;
  int64_t mbps = -1;   // link speed in Mbit/s; < 0: unknown
  std::string source;  // where the speed came from ("sysfs", "libfabric"); "" if unknown
};

// The interfaces behind `sources` (the local addresses of this rank's tcp connections to
// other hosts: which interface each leaves by), one entry per interface in first-seen
// order, speeds from <sys_class>/net/<if>/speed. An address that no interface holds any
// more is named by the address, speed unknown. Blocking (getifaddrs, sysfs reads).
std::vector<UsedLink> TcpUsedLinks(const std::vector<net::SockAddr>& sources,
                                   const std::string& sys_class);

// One ofi rail as its endpoint reports it (ofi::OfiEndpoint::domain, nic_speed_mbps),
// kept from set-up so that OfiUsedLink can name it later without the endpoint.
struct OfiDomain {
  std::string name;
  int64_t nic_mbps = -1;  // Mbit/s; < 0: the provider does not say
};

// The ofi domain `domain` as a link: `nic_mbps` (the provider's fi_info nic link speed,
// < 0 when it does not fill it), else the speed sysfs gives for an interface of the same
// name (the tcp and verbs providers name domains after interfaces), else unknown.
UsedLink OfiUsedLink(const std::string& domain, int64_t nic_mbps, const std::string& sys_class);

}  // namespace weft::transport
