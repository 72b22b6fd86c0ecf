#include "transport/card.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <sstream>

#include "transport/stripes.h"

namespace weft::transport {
namespace {

constexpr const char* kCardVersionLine = "weft-card 1";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool IsToken(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

template <typename T>
bool ParseNumber(const std::string& s, T* out, int base = 10) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

Status Bad(const std::string& why, const std::string& line) {
  return ProtocolError(fmt::format("malformed transport card: {} in '{}'", why, line));
}

}  // namespace

TransportMode ResolvedMode(const Card& card) {
  if (card.mode == TransportMode::kAuto && !card.ofi_provider.empty())
    return TransportMode::kShmOfi;
  return card.mode;
}

std::string DescribeMode(const Card& card) {
  if (card.mode != TransportMode::kAuto) return TransportModeName(card.mode);
  if (card.ofi_provider.empty()) return "auto (shm+tcp, no fabric)";
  return fmt::format("auto (shm+ofi over {})", card.ofi_provider);
}

std::string EncodeCard(const Card& card) {
  std::string out =
      fmt::format("{}\nrank {} size {} comm {:016x} mode {}\nhost {}\ntcp", kCardVersionLine,
                  card.rank, card.size, card.comm_id, TransportModeName(card.mode), card.host_id);
  for (const auto& a : card.tcp) out += " " + a.ToString();
  if (card.tcp_rails > 1)
    out += fmt::format(" rails {} stripe-min {}", card.tcp_rails, card.stripe_min);
  if (!card.ofi_provider.empty()) {
    out += fmt::format("\nofi {} ", card.ofi_provider);
    for (size_t k = 0; k < card.ofi_addrs.size(); ++k) {
      if (k > 0) out += ',';
      for (uint8_t b : card.ofi_addrs[k]) out += fmt::format("{:02x}", b);
    }
    out += fmt::format(" eager {}", card.ofi_eager);
  }
  return out;
}

Result<Card> DecodeCard(const std::string& text) {
  std::vector<std::string> lines = Split(text, '\n');
  if (lines.size() != 4 && lines.size() != 5)
    return Bad(fmt::format("{} lines, expected 4 or 5", lines.size()), text);
  if (lines[0] != kCardVersionLine) return Bad("unknown version line", lines[0]);

  Card card;
  std::vector<std::string> f = Split(lines[1], ' ');
  if (f.size() != 8 || f[0] != "rank" || f[2] != "size" || f[4] != "comm" || f[6] != "mode")
    return Bad("bad identity line", lines[1]);
  if (!ParseNumber(f[1], &card.rank) || !ParseNumber(f[3], &card.size) ||
      !ParseNumber(f[5], &card.comm_id, 16) || f[5].size() != 16 || card.size < 1 ||
      card.rank < 0 || card.rank >= card.size)
    return Bad("bad rank, size or comm", lines[1]);
  if (f[7] == "auto") {
    card.mode = TransportMode::kAuto;
  } else if (f[7] == "tcp") {
    card.mode = TransportMode::kTcp;
  } else if (f[7] == "shm") {
    card.mode = TransportMode::kShm;
  } else if (f[7] == "ofi") {
    card.mode = TransportMode::kOfi;
  } else if (f[7] == "shm+ofi") {
    card.mode = TransportMode::kShmOfi;
  } else {
    return Bad("unknown mode", lines[1]);
  }

  if (lines[2].rfind("host ", 0) != 0 || !IsToken(lines[2].substr(5)))
    return Bad("bad host line", lines[2]);
  card.host_id = lines[2].substr(5);

  std::vector<std::string> t = Split(lines[3], ' ');
  if (t[0] != "tcp") return Bad("bad tcp line", lines[3]);
  size_t n_addrs = t.size();
  if (t.size() >= 5 && t[t.size() - 4] == "rails") {
    n_addrs = t.size() - 4;
    if (!ParseNumber(t[t.size() - 3], &card.tcp_rails) || card.tcp_rails < 2 ||
        card.tcp_rails > static_cast<int>(n_addrs - 1) || t[t.size() - 2] != "stripe-min" ||
        !ParseNumber(t[t.size() - 1], &card.stripe_min) || card.stripe_min < 1)
      return Bad("bad rails", lines[3]);
  }
  for (size_t i = 1; i < n_addrs; ++i) {
    // Numeric "a.b.c.d:port" or "[v6]:port" only: a card never needs name resolution.
    if (t[i].empty() || !(std::isdigit(static_cast<unsigned char>(t[i][0])) || t[i][0] == '['))
      return Bad("bad tcp address '" + t[i] + "'", lines[3]);
    Result<net::SockAddr> a = net::SockAddr::Parse(t[i], net::Resolve::kNumericOnly);
    if (!a.ok()) return Bad(a.status().message(), lines[3]);
    if (a->port() == 0) return Bad("tcp address without port '" + t[i] + "'", lines[3]);
    card.tcp.push_back(a.value());
  }
  if (lines.size() == 5) {
    std::vector<std::string> o = Split(lines[4], ' ');
    if (o.size() != 5 || o[0] != "ofi" || !IsToken(o[1]) || o[3] != "eager")
      return Bad("bad ofi line", lines[4]);
    if (!ParseNumber(o[4], &card.ofi_eager)) return Bad("bad ofi eager size", lines[4]);
    card.ofi_provider = o[1];
    std::vector<std::string> rails = Split(o[2], ',');
    if (rails.size() > static_cast<size_t>(kMaxRails)) return Bad("too many ofi rails", lines[4]);
    for (const std::string& hex : rails) {
      if (hex.empty() || hex.size() % 2 != 0) return Bad("bad ofi address", lines[4]);
      std::vector<uint8_t>& addr = card.ofi_addrs.emplace_back();
      for (size_t i = 0; i < hex.size(); i += 2) {
        uint8_t b = 0;
        if (!ParseNumber(hex.substr(i, 2), &b, 16)) return Bad("bad ofi address", lines[4]);
        addr.push_back(b);
      }
    }
  }
  return card;
}

}  // namespace weft::transport
