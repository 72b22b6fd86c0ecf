#include "net/ifname_spec.h"

#include <strings.h>
#include <sys/socket.h>

namespace weft::net {

Result<IfnameSpec> ParseIfnameSpec(const std::string& spec) {
  IfnameSpec out;
  size_t i = 0;
  if (i < spec.size() && spec[i] == '^') { out.exclude = true; ++i; }
  if (i < spec.size() && spec[i] == '=') { out.exact = true; ++i; }
  while (i <= spec.size()) {
    size_t comma = spec.find(',', i);
    if (comma == std::string::npos) comma = spec.size();
    std::string name = spec.substr(i, comma - i);
    if (!name.empty()) out.names.push_back(name);  // tolerate "a,,b" and a trailing ","
    i = comma + 1;
  }
  if (out.names.empty())
    return InvalidArgument("WEFT_SOCKET_IFNAME='" + spec + "' names no interface");
  return out;
}

bool IfnameMatches(const IfnameSpec& spec, const std::string& ifname) {
  bool listed = false;
  for (const auto& n : spec.names) {
    if (spec.exact ? ifname == n : ifname.compare(0, n.size(), n) == 0) {
      listed = true;
      break;
    }
  }
  return listed != spec.exclude;
}

Result<int> ParseFamily(const std::string& f) {
  if (f.empty()) return AF_UNSPEC;
  for (const char* s : {"AF_INET", "inet", "ipv4", "4"})
    if (strcasecmp(f.c_str(), s) == 0) return AF_INET;
  for (const char* s : {"AF_INET6", "inet6", "ipv6", "6"})
    if (strcasecmp(f.c_str(), s) == 0) return AF_INET6;
  return InvalidArgument("WEFT_SOCKET_FAMILY='" + f + "' is not AF_INET or AF_INET6");
}

}  // namespace weft::net
