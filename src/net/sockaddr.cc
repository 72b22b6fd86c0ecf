// SockAddr: parsing and formatting IPv4/IPv6 socket addresses.
#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

#include "net/socket.h"

namespace weft::net {
namespace {

// Strict decimal port: digits only, 0..65535 (strtoul would accept "+1", " 1", "0x1").
Result<uint16_t> ParsePort(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 5)
    return InvalidArgument("address '" + whole + "': bad port '" + text + "'");
  unsigned v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return InvalidArgument("address '" + whole + "': bad port '" + text + "'");
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 65535) return InvalidArgument("address '" + whole + "': port " + text + " > 65535");
  return static_cast<uint16_t>(v);
}

}  // namespace

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SockAddr::set_port(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

std::string SockAddr::ToString() const {
  if (len == 0 || (family() != AF_INET && family() != AF_INET6)) return "<no address>";
  char host[NI_MAXHOST];
  // NI_NUMERICHOST never does DNS and appends "%scope" to scoped IPv6 addresses.
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&storage), len, host, sizeof(host),
                    nullptr, 0, NI_NUMERICHOST) != 0)
    return "<bad address>";
  std::string p = std::to_string(port());
  if (family() == AF_INET6) return "[" + std::string(host) + "]:" + p;
  return std::string(host) + ":" + p;
}

Result<SockAddr> SockAddr::FromHostPort(const std::string& host_in, uint16_t port,
                                        Resolve resolve) {
  std::string host = host_in;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) return InvalidArgument("empty host name");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (resolve == Resolve::kNumericOnly) hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  int rc;
  do {
    rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  } while (rc == EAI_SYSTEM && errno == EINTR);
  if (rc == EAI_SYSTEM) return ErrnoStatus("getaddrinfo('" + host + "')", errno);
  if (rc == EAI_AGAIN)  // DNS is temporarily unreachable: the caller may retry
    return Unavailable("cannot resolve host '" + host + "': " + gai_strerror(rc));
  if (rc != 0) return InvalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  // The resolver's first answer follows RFC 6724 preference order; use it.
  SockAddr a;
  for (addrinfo* r = res; r != nullptr; r = r->ai_next) {
    if ((r->ai_family == AF_INET || r->ai_family == AF_INET6) &&
        r->ai_addrlen <= sizeof(a.storage)) {
      std::memcpy(&a.storage, r->ai_addr, r->ai_addrlen);
      a.len = r->ai_addrlen;
      break;
    }
  }
  ::freeaddrinfo(res);
  if (a.len == 0) return InvalidArgument("host '" + host + "' has no IPv4 or IPv6 address");
  a.set_port(port);
  return a;
}

Result<SockAddr> SockAddr::Parse(const std::string& text, Resolve resolve) {
  if (text.empty()) return InvalidArgument("empty address");
  std::string host;
  uint16_t port = 0;
  if (text.front() == '[') {
    // "[v6]" or "[v6]:port" (the v6 part may carry a "%scope").
    size_t close = text.find(']');
    if (close == std::string::npos)
      return InvalidArgument("address '" + text + "': missing ']'");
    host = text.substr(1, close - 1);
    std::string rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return InvalidArgument("address '" + text + "': junk after ']'");
      WEFT_ASSIGN_OR_RETURN(port, ParsePort(rest.substr(1), text));
    }
  } else {
    size_t first = text.find(':');
    size_t last = text.rfind(':');
    if (first == std::string::npos) {
      host = text;  // "host" or "1.2.3.4": port 0
    } else if (first == last) {
      host = text.substr(0, first);  // "host:port"
      WEFT_ASSIGN_OR_RETURN(port, ParsePort(text.substr(first + 1), text));
    } else {
      host = text;  // a bare IPv6 literal such as "::1": no port can be told apart
    }
  }
  if (host.empty()) return InvalidArgument("address '" + text + "': empty host");
  auto r = FromHostPort(host, port, resolve);
  if (!r.ok()) return r.status().WithContext("address '" + text + "'");
  return r;
}

}  // namespace weft::net
