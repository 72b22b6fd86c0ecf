// See dns_guard.cc: in fuzz binaries getaddrinfo resolves literals only.
#pragma once

namespace weft::fuzz {

// How many lookups so far named a host that is not a numeric address (each would have
// gone to DNS in a real process; here each failed with EAI_NONAME).
long NameLookups();

}  // namespace weft::fuzz
