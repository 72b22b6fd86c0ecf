#include "transport/tcp/rails.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/env.h"
#include "net/ifname_spec.h"

namespace weft::transport::tcp {

Result<int> RailsWantedFromEnv() {
  return ParseRailCount("WEFT_SOCKET_NRAILS", GetEnv("WEFT_SOCKET_NRAILS").value_or(""));
}

Result<uint64_t> StripeMinFromEnv() {
  WEFT_ASSIGN_OR_RETURN(
      long long v, GetEnvInt("WEFT_TCP_STRIPE_MIN", static_cast<long long>(kDefaultStripeMin)));
  if (v < 1)
    return InvalidArgument(fmt::format("WEFT_TCP_STRIPE_MIN must be at least 1 byte, got {}", v));
  return static_cast<uint64_t>(v);
}

int LocalRailCount(int wanted, const std::string& ifname_spec, size_t routable_addrs) {
  int have = static_cast<int>(std::min<size_t>(routable_addrs, kMaxRails));
  if (have < 1) return 1;
  if (wanted > 0) return std::min(wanted, have);
  if (ifname_spec.empty()) return 1;
  Result<net::IfnameSpec> spec = net::ParseIfnameSpec(ifname_spec);
  // An invalid spec already failed interface selection; exclusion lists keep one rail.
  if (!spec.ok() || spec->exclude) return 1;
  return have;
}

std::vector<net::SockAddr> RailAddresses(const std::vector<net::SockAddr>& addrs, int rail) {
  std::vector<net::SockAddr> out;
  if (rail >= 0 && static_cast<size_t>(rail) < addrs.size()) out.push_back(addrs[rail]);
  for (size_t i = 0; i < addrs.size(); ++i)
    if (static_cast<int>(i) != rail) out.push_back(addrs[i]);
  return out;
}

}  // namespace weft::transport::tcp
