// Reading interface speeds from sysfs (see link_speed.h).
#include "net/link_speed.h"

#include <cctype>
#include <fstream>

namespace weft::net {
namespace {

// A speed file holds one short line; more than this is not one.
constexpr size_t kMaxSpeedFileBytes = 64;
constexpr int64_t kMaxSpeedMbps = 1'000'000'000;

}  // namespace

std::optional<int64_t> ParseSysfsSpeedMbps(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (begin == end) return std::nullopt;
  int64_t mbps = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    mbps = mbps * 10 + (text[i] - '0');
    if (mbps > kMaxSpeedMbps) return std::nullopt;  // checked per digit: never overflows
  }
  if (mbps <= 0) return std::nullopt;
  return mbps;
}

std::optional<int64_t> ReadInterfaceSpeedMbps(const std::string& sys_class,
                                              const std::string& ifname) {
  // The name comes from getifaddrs or a provider's domain name; refuse anything that
  // would walk out of <sys_class>/net.
  if (ifname.empty() || ifname == "." || ifname == ".." || ifname.find('/') != std::string::npos)
    return std::nullopt;
  std::ifstream in(sys_class + "/net/" + ifname + "/speed");
  if (!in) return std::nullopt;
  std::string text(kMaxSpeedFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  // A failed read (EINVAL from a down veth) leaves badbit set and nothing counted.
  if (in.bad()) return std::nullopt;
  const size_t got = static_cast<size_t>(in.gcount());
  if (got == 0 || got > kMaxSpeedFileBytes) return std::nullopt;
  text.resize(got);
  return ParseSysfsSpeedMbps(text);
}

}  // namespace weft::net
