#include "comm/unique_id.h"

#include <fmt/format.h>

namespace weft::comm {
namespace {
constexpr std::string_view kIdTag = "weft-id-2";

bool IsLowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// splitmix64's finalizer: every input bit moves about half of the output bits, so
// nearby salts (generation 1, 2, 3) give unrelated nonces.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Result<std::string> DeriveUniqueId(std::string_view text, uint64_t salt) {
  WEFT_ASSIGN_OR_RETURN(UniqueIdFields fields, ParseUniqueId(text));
  // The salt goes through Mix before it meets the nonce, so salt == nonce ^ k cannot
  // cancel against it.
  uint64_t nonce = Mix(fields.nonce ^ Mix(salt + 0x9e3779b97f4a7c15ULL));
  return FormatUniqueId(fields.store, nonce, fields.secret);
}

std::string FormatUniqueId(const net::SockAddr& store, uint64_t nonce, const std::string& secret) {
  return fmt::format("{} {} {:016x} {}", kIdTag, store.ToString(), nonce, secret);
}

Result<uint64_t> ParseHex64(std::string_view text) {
  if (text.size() != 16) return InvalidArgument("expected 16 hex digits");
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return InvalidArgument("expected 16 hex digits");
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

Result<UniqueIdFields> ParseUniqueId(std::string_view text) {
  auto bad = [](const std::string& why) {
    return InvalidArgument("the unique id is malformed (not made by weftGetUniqueId?): " + why);
  };
  size_t s1 = text.find(' ');
  if (s1 == std::string_view::npos || text.substr(0, s1) != kIdTag) return bad("no weft tag");
  size_t s2 = text.find(' ', s1 + 1);
  if (s2 == std::string_view::npos) return bad("no communicator id");
  std::string addr(text.substr(s1 + 1, s2 - s1 - 1));
  auto store = net::SockAddr::Parse(addr, net::Resolve::kNumericOnly);
  if (!store.ok()) return bad(store.status().message());
  if (store->port() == 0) return bad("store address without a port");
  size_t s3 = text.find(' ', s2 + 1);
  if (s3 == std::string_view::npos) return bad("no secret");
  auto nonce = ParseHex64(text.substr(s2 + 1, s3 - s2 - 1));
  if (!nonce.ok()) return bad(nonce.status().message());
  std::string_view secret = text.substr(s3 + 1);
  if (secret.size() != kUniqueIdSecretHex || !IsLowerHex(secret))
    return bad(fmt::format("the secret is not {} lower-case hex digits", kUniqueIdSecretHex));
  return UniqueIdFields{store.value(), nonce.value(), std::string(secret)};
}

}  // namespace weft::comm
