// Provider and domain choices from names (see nic_choice.h).
#include "transport/ofi/nic_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace weft::transport::ofi {
namespace {

std::string Quote(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

bool AutoPicksProvider(std::string_view provider) {
  // "efa" and its variants ("efa;ofi_rxr" in older libfabrics); verbs only under rxm,
  // the RDM layer weft asks for (plain verbs offers no FI_EP_RDM).
  return provider == "efa" || provider.rfind("efa;", 0) == 0 || provider == "verbs;ofi_rxm";
}

bool RdmaDevicePresent(const std::string& sys_class) {
  std::error_code ec;
  std::filesystem::directory_iterator it(sys_class + "/infiniband", ec);
  return !ec && it != std::filesystem::directory_iterator();
}

Result<std::vector<std::string>> ParseDomainList(std::string_view value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t end = value.find(',', start);
    std::string_view item =
        value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (item.empty())
      return InvalidArgument(
          fmt::format("WEFT_OFI_DOMAIN='{}' has an empty name (expected name[,name...])", value));
    out.emplace_back(item);
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

Result<std::string> ChooseDomain(const std::vector<std::string>& offered,
                                 const std::vector<std::string>& pinned, int local_index) {
  std::vector<std::string> distinct;
  for (const std::string& d : offered)
    if (std::find(distinct.begin(), distinct.end(), d) == distinct.end()) distinct.push_back(d);
  if (distinct.empty()) return InvalidArgument("the ofi provider offers no domain");
  for (const std::string& p : pinned)
    if (std::find(distinct.begin(), distinct.end(), p) == distinct.end())
      return InvalidArgument(fmt::format(
          "WEFT_OFI_DOMAIN names '{}', which the provider does not offer (it offers {})", p,
          Quote(distinct)));
  const std::vector<std::string>& use = pinned.empty() ? distinct : pinned;
  const size_t i = static_cast<size_t>(std::max(local_index, 0)) % use.size();
  return use[i];
}

}  // namespace weft::transport::ofi
