// SockAddr::Parse (net/socket.h): the parser behind card addresses, the address inside
// a unique id and WEFT_STORE_ADDR-style text. dns_guard.cc keeps it to literals, so the
// run never touches DNS. Properties: an accepted address is IPv4 or IPv6, and its
// ToString() parses back to the same address (same text, family and port); an error is
// InvalidArgument (Unavailable would mean a DNS query was attempted).
#include <netinet/in.h>

#include <string>

#include "fuzz_util.h"
#include "net/socket.h"

using weft::net::SockAddr;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto a = SockAddr::Parse(std::string(reinterpret_cast<const char*>(data), size));
  if (!a.ok()) {
    WEFT_FUZZ_CHECK(a.status().code() == weft::Code::kInvalidArgument);
    return 0;
  }
  WEFT_FUZZ_CHECK(a->family() == AF_INET || a->family() == AF_INET6);
  std::string text = a->ToString();
  auto b = SockAddr::Parse(text);
  WEFT_FUZZ_CHECK(b.ok());
  WEFT_FUZZ_CHECK(b->family() == a->family() && b->port() == a->port());
  WEFT_FUZZ_CHECK(b->ToString() == text);
  return 0;
}
