// SelectInterfaces: which local interfaces weft traffic may use (getifaddrs + the
// WEFT_SOCKET_IFNAME / WEFT_SOCKET_FAMILY rules of ifname_spec.h); InterfaceWithAddress:
// which interface holds an address.
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/env.h"
#include "net/ifname_spec.h"
#include "net/socket.h"

namespace weft::net {
namespace {

struct Candidate {
  std::string name;
  SockAddr addr;
  bool loopback = false;
  bool link_local = false;  // IPv6 fe80::/10
};

// Lower is better: IPv4, then routable IPv6, then link-local IPv6 (needs a scope id).
int Rank(const Candidate& c) {
  if (c.addr.family() == AF_INET) return 0;
  return c.link_local ? 2 : 1;
}

Result<std::vector<Candidate>> ListUpInterfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return ErrnoStatus("getifaddrs", errno);
  std::vector<Candidate> out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    Candidate c;
    c.name = i->ifa_name;
    c.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    c.addr.len = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&c.addr.storage, i->ifa_addr, c.addr.len);
    if (fam == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&c.addr.storage);
      c.link_local = IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr);
    }
    c.addr.set_port(0);
    out.push_back(std::move(c));
  }
  ::freeifaddrs(list);
  return out;
}

// "lo (127.0.0.1, ::1), eth0 (10.0.0.2)" for error messages.
std::string Describe(const std::vector<Candidate>& all) {
  std::string s;
  std::string current;
  for (const auto& c : all) {
    std::string a = c.addr.ToString();
    a = a.substr(0, a.rfind(':'));  // drop ":0"
    if (a.size() > 2 && a.front() == '[') a = a.substr(1, a.size() - 2);
    if (c.name != current) {
      if (!current.empty()) s += "), ";
      s += c.name + " (";
      current = c.name;
    } else {
      s += ", ";
    }
    s += a;
  }
  if (!current.empty()) s += ")";
  return s.empty() ? "none" : s;
}

// One address per interface name, the best by Rank, in getifaddrs order of names.
std::vector<Interface> BestPerName(const std::vector<Candidate>& picked) {
  std::vector<std::string> order;
  std::vector<const Candidate*> best;
  for (const auto& c : picked) {
    size_t k = 0;
    while (k < order.size() && order[k] != c.name) ++k;
    if (k == order.size()) {
      order.push_back(c.name);
      best.push_back(&c);
    } else if (Rank(c) < Rank(*best[k])) {
      best[k] = &c;
    }
  }
  std::vector<Interface> out;
  for (const Candidate* c : best) out.push_back(Interface{c->name, c->addr});
  return out;
}

// The same IP address (and IPv6 scope); ports are not compared.
bool SameIp(const SockAddr& a, const SockAddr& b) {
  if (a.family() != b.family()) return false;
  if (a.family() == AF_INET) {
    const auto* x = reinterpret_cast<const sockaddr_in*>(&a.storage);
    const auto* y = reinterpret_cast<const sockaddr_in*>(&b.storage);
    return x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  if (a.family() == AF_INET6) {
    const auto* x = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    const auto* y = reinterpret_cast<const sockaddr_in6*>(&b.storage);
    return std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0 &&
           x->sin6_scope_id == y->sin6_scope_id;
  }
  return false;
}

}  // namespace

std::optional<std::string> InterfaceWithAddress(const SockAddr& addr) {
  Result<std::vector<Candidate>> all = ListUpInterfaces();
  if (!all.ok()) return std::nullopt;
  for (const Candidate& c : all.value())
    if (SameIp(c.addr, addr)) return c.name;
  return std::nullopt;
}

Result<std::vector<Interface>> SelectInterfaces(const std::string& ifname_spec,
                                                const std::string& family) {
  WEFT_ASSIGN_OR_RETURN(int fam, ParseFamily(family));
  std::optional<IfnameSpec> spec;
  if (!ifname_spec.empty()) {
    WEFT_ASSIGN_OR_RETURN(IfnameSpec s, ParseIfnameSpec(ifname_spec));
    spec = std::move(s);
  }
  WEFT_ASSIGN_OR_RETURN(std::vector<Candidate> all, ListUpInterfaces());

  std::vector<Candidate> picked;
  for (const auto& c : all) {
    if (fam != AF_UNSPEC && c.addr.family() != fam) continue;
    if (spec) {
      if (!IfnameMatches(*spec, c.name)) continue;
      // A link-local address is only usable when the user named its interface.
      if (c.link_local && spec->exclude) continue;
    } else {
      if (c.loopback || c.name.compare(0, 6, "docker") == 0 || c.link_local) continue;
    }
    picked.push_back(c);
  }
  if (picked.empty() && !spec) {
    // No routable interface (a laptop, a sandbox): single-host jobs still work on loopback.
    for (const auto& c : all)
      if (c.loopback && (fam == AF_UNSPEC || c.addr.family() == fam)) picked.push_back(c);
  }
  if (picked.empty()) {
    std::string what = spec ? "WEFT_SOCKET_IFNAME='" + ifname_spec + "'" : "the default rules";
    if (!family.empty()) what += " with WEFT_SOCKET_FAMILY=" + family;
    return InvalidArgument(what + " selects no usable interface; up interfaces: " +
                           Describe(all));
  }
  return BestPerName(picked);
}

Result<std::vector<Interface>> SelectInterfaces() {
  return SelectInterfaces(GetEnv("WEFT_SOCKET_IFNAME").value_or(""),
                          GetEnv("WEFT_SOCKET_FAMILY").value_or(""));
}

}  // namespace weft::net
