// The mesh card parser (transport/card.h): cards arrive from other processes through
// the store. Two halves per input:
//  - the input as card text: DecodeCard never crashes; a card it accepts is valid
//    (0 <= rank < size, a token host id, addresses with ports) and survives
//    encode -> decode -> encode unchanged;
//  - the input as the fields of a card: every valid Card encodes to text that decodes
//    back to an equal card.
// card.cc promises that "a card never needs name resolution" (it parses with
// Resolve::kNumericOnly). dns_guard.cc keeps DNS out of the run and counts lookups of
// non-literal names; any lookup is a crash (a reproducer), unless WEFT_FUZZ_STRICT_DNS=0,
// which only prints the total at exit.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dns_guard.h"
#include "fuzz_util.h"
#include "transport/card.h"

namespace {

using weft::transport::Card;
using weft::transport::DecodeCard;
using weft::transport::EncodeCard;

void CheckSame(const Card& a, const Card& b) {
  WEFT_FUZZ_CHECK(a.rank == b.rank && a.size == b.size && a.comm_id == b.comm_id);
  WEFT_FUZZ_CHECK(a.mode == b.mode && a.host_id == b.host_id && a.tcp.size() == b.tcp.size());
  WEFT_FUZZ_CHECK(a.tcp_rails == b.tcp_rails && a.stripe_min == b.stripe_min);
  for (size_t i = 0; i < a.tcp.size(); ++i)
    WEFT_FUZZ_CHECK(a.tcp[i].ToString() == b.tcp[i].ToString());
}

void CheckValid(const Card& c) {
  WEFT_FUZZ_CHECK(c.size >= 1 && c.rank >= 0 && c.rank < c.size && !c.host_id.empty());
  for (const auto& a : c.tcp)
    WEFT_FUZZ_CHECK((a.family() == AF_INET || a.family() == AF_INET6) && a.port() != 0);
}

bool StrictDns() {
  static const bool strict = [] {
    const char* v = std::getenv("WEFT_FUZZ_STRICT_DNS");
    bool on = !(v != nullptr && std::strcmp(v, "0") == 0);
    if (!on)
      std::atexit([] {
        std::fprintf(stderr, "card_fuzz: %ld lookups of non-literal host names (DNS in a real "
                             "process; refused here)\n", weft::fuzz::NameLookups());
      });
    return on;
  }();
  return strict;
}

weft::net::SockAddr MakeAddr(weft::fuzz::Reader& in) {
  weft::net::SockAddr a;
  uint16_t port = static_cast<uint16_t>(1 + in.U32() % 65535);
  if (in.Byte() & 1) {
    auto* s = reinterpret_cast<sockaddr_in*>(&a.storage);
    s->sin_family = AF_INET;
    s->sin_addr.s_addr = in.U32();
    a.len = sizeof(sockaddr_in);
  } else {
    auto* s = reinterpret_cast<sockaddr_in6*>(&a.storage);
    s->sin6_family = AF_INET6;
    for (auto& b : s->sin6_addr.s6_addr) b = in.Byte();
    // A scope only where getnameinfo prints one: link-local addresses.
    if (IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr)) s->sin6_scope_id = in.Byte();
    a.len = sizeof(sockaddr_in6);
  }
  a.set_port(port);
  return a;
}

Card MakeCard(weft::fuzz::Reader& in) {
  Card c;
  c.size = 1 + static_cast<int>(in.U32() % (1u << 24));
  c.rank = static_cast<int>(in.U32() % static_cast<uint32_t>(c.size));
  c.comm_id = (static_cast<uint64_t>(in.U32()) << 32) | in.U32();
  c.mode = static_cast<weft::transport::TransportMode>(in.Byte() % 3);
  size_t host_len = 1 + in.Byte() % 48;
  for (size_t i = 0; i < host_len; ++i) c.host_id.push_back(static_cast<char>(0x21 + in.Byte() % 94));
  for (size_t n = in.Byte() % 5; n > 0; --n) c.tcp.push_back(MakeAddr(in));
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool strict = StrictDns();
  const long lookups_before = weft::fuzz::NameLookups();
  auto decoded = DecodeCard(std::string(reinterpret_cast<const char*>(data), size));
  if (strict) WEFT_FUZZ_CHECK(weft::fuzz::NameLookups() == lookups_before);
  if (decoded.ok()) {
    CheckValid(decoded.value());
    std::string text = EncodeCard(decoded.value());
    auto again = DecodeCard(text);
    WEFT_FUZZ_CHECK(again.ok());
    CheckSame(decoded.value(), again.value());
    WEFT_FUZZ_CHECK(EncodeCard(again.value()) == text);
  } else {
    WEFT_FUZZ_CHECK(decoded.status().code() == weft::Code::kProtocolError);
  }

  weft::fuzz::Reader in(data, size);
  Card made = MakeCard(in);
  auto back = DecodeCard(EncodeCard(made));
  WEFT_FUZZ_CHECK(back.ok());
  CheckSame(made, back.value());
  return 0;
}
