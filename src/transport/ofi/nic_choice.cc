// Provider and domain choices from names (see nic_choice.h).
#include "transport/ofi/nic_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

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

std::optional<std::vector<int>> ParseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  if (text.empty()) return cpus;
  auto number = [](std::string_view s, int* out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size() && *out >= 0;
  };
  // Far beyond any machine's CPU count: a corrupt range must not allocate gigabytes.
  constexpr int kMaxCpu = 1 << 16;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const size_t dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!number(item, &lo)) return std::nullopt;
      hi = lo;
    } else if (!number(item.substr(0, dash), &lo) || !number(item.substr(dash + 1), &hi)) {
      return std::nullopt;
    }
    if (hi < lo || hi >= kMaxCpu) return std::nullopt;
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    start = end + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> NicLocalCpus(const std::string& sys_class, std::string_view domain) {
  std::string device(domain);
  for (std::string_view suffix : {"-rdm", "-dgrm"}) {
    if (device.size() > suffix.size() &&
        device.compare(device.size() - suffix.size(), suffix.size(), suffix) == 0) {
      device.resize(device.size() - suffix.size());
    }
  }
  if (device.empty() || device.find('/') != std::string::npos || device[0] == '.') return {};
  for (const std::string& path : {sys_class + "/infiniband/" + device + "/device/local_cpulist",
                                  sys_class + "/net/" + device + "/device/local_cpulist"}) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) continue;
    if (auto cpus = ParseCpuList(line)) return *cpus;
  }
  return {};
}

std::vector<std::string> NearDomains(const std::vector<std::string>& offered,
                                     const std::vector<std::vector<int>>& nic_cpus,
                                     const std::vector<int>& my_cpus) {
  std::vector<std::string> near;
  for (size_t i = 0; i < offered.size() && i < nic_cpus.size(); ++i) {
    const std::vector<int>& nic = nic_cpus[i];
    const bool close = std::any_of(my_cpus.begin(), my_cpus.end(), [&](int c) {
      return std::binary_search(nic.begin(), nic.end(), c);
    });
    if (close) near.push_back(offered[i]);
  }
  return near.empty() ? offered : near;
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

int AutoOfiRails(int domains, int local_ranks, int max_rails) {
  if (local_ranks <= 0 || domains <= 0) return 1;
  return std::clamp(domains / local_ranks, 1, std::max(1, max_rails));
}

}  // namespace weft::transport::ofi
