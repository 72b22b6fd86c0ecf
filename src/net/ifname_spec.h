// The WEFT_SOCKET_IFNAME grammar (NCCL's NCCL_SOCKET_IFNAME rules), as pure functions
// so the matching is testable without real interfaces:
//   "eth,ib"      include names starting with any entry
//   "^docker,lo"  exclude names starting with any entry
//   "=eth0"       every entry is an exact name ("^=" excludes exact names)
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace weft::net {

struct IfnameSpec {
  bool exclude = false;             // "^": the entries name interfaces to leave out
  bool exact = false;               // "=": entries are whole names, not prefixes
  std::vector<std::string> names;   // never empty for a parsed spec
};

// InvalidArgument for a spec with no names ("", "^", "=", ",,").
Result<IfnameSpec> ParseIfnameSpec(const std::string& spec);
bool IfnameMatches(const IfnameSpec& spec, const std::string& ifname);

// "AF_INET"/"inet"/"ipv4"/"4" -> AF_INET, the same for 6, "" -> AF_UNSPEC.
Result<int> ParseFamily(const std::string& family);

}  // namespace weft::net
