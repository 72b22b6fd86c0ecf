// The links a rank uses to other hosts (see used_links.h).
#include "transport/used_links.h"

#include <algorithm>
#include <optional>

#include "net/link_speed.h"

namespace weft::transport {
namespace {

UsedLink WithSysfsSpeed(std::string name, const std::string& ifname, const std::string& sys_class) {
  UsedLink link{std::move(name), -1, ""};
  if (std::optional<int64_t> mbps = net::ReadInterfaceSpeedMbps(sys_class, ifname)) {
    link.mbps = *mbps;
    link.source = "sysfs";
  }
  return link;
}

}  // namespace

std::vector<UsedLink> TcpUsedLinks(const std::vector<net::SockAddr>& sources,
                                   const std::string& sys_class) {
  std::vector<UsedLink> out;
  for (const net::SockAddr& addr : sources) {
    std::optional<std::string> ifname = net::InterfaceWithAddress(addr);
    std::string name = ifname ? *ifname : addr.ToString();
    if (std::any_of(out.begin(), out.end(), [&](const UsedLink& l) { return l.name == name; }))
      continue;  // several peers (or rails) reached through one interface
    out.push_back(ifname ? WithSysfsSpeed(name, *ifname, sys_class) : UsedLink{name, -1, ""});
  }
  return out;
}

UsedLink OfiUsedLink(const std::string& domain, int64_t nic_mbps, const std::string& sys_class) {
  std::string name = "ofi:" + domain;
  if (nic_mbps > 0) return UsedLink{std::move(name), nic_mbps, "libfabric"};
  return WithSysfsSpeed(std::move(name), domain, sys_class);
}

}  // namespace weft::transport
