// Linked into the targets whose parsers reach getaddrinfo (SockAddr::Parse). A fuzz run
// must never send a name to DNS: it would be slow, flaky and leak fuzz inputs to the
// network. This definition takes the place of libc's getaddrinfo in the fuzz binaries
// (the executable's symbol wins over the shared library's, and over the sanitizer's weak
// interceptor) and forwards every lookup with AI_NUMERICHOST added, so only literal
// addresses resolve. A lookup that would have needed DNS is counted, so a target can
// check a parser's promise to resolve nothing (see card_fuzz.cc).
#include "dns_guard.h"

#include <dlfcn.h>
#include <netdb.h>

namespace weft::fuzz {
namespace {
long g_name_lookups = 0;
}  // namespace

long NameLookups() { return g_name_lookups; }

}  // namespace weft::fuzz

extern "C" int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                           struct addrinfo** res) {
  using Fn = int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getaddrinfo"));
  struct addrinfo numeric = hints != nullptr ? *hints : addrinfo{};
  if (hints == nullptr) numeric.ai_family = AF_UNSPEC;
  numeric.ai_flags |= AI_NUMERICHOST;
  int rc = real(node, service, &numeric, res);
  // EAI_NONAME under AI_NUMERICHOST: not a literal, so the caller asked for DNS.
  if (rc == EAI_NONAME && node != nullptr && (hints == nullptr ||
                                              !(hints->ai_flags & AI_NUMERICHOST)))
    ++weft::fuzz::g_name_lookups;
  return rc;
}
