// ParseIfnameSpec / IfnameMatches / ParseFamily (net/ifname_spec.h): WEFT_SOCKET_IFNAME
// and WEFT_SOCKET_FAMILY text. Input: the spec on the first line, interface names to
// match on the following lines.
// Properties: a parsed spec has at least one name, none empty or holding a ','; "^" and
// "=" are read as the exclude and exact flags; every listed name matches itself (is
// selected unless excluding); flipping `exclude` flips every match; errors are
// InvalidArgument. ParseFamily answers only AF_UNSPEC, AF_INET or AF_INET6.
#include <sys/socket.h>

#include <string>

#include "fuzz_util.h"
#include "net/ifname_spec.h"

using namespace weft::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const std::string text(in.Until('\n'));

  auto family = ParseFamily(text);
  if (family.ok())
    WEFT_FUZZ_CHECK(*family == AF_UNSPEC || *family == AF_INET || *family == AF_INET6);
  else
    WEFT_FUZZ_CHECK(family.status().code() == weft::Code::kInvalidArgument);

  auto spec = ParseIfnameSpec(text);
  if (!spec.ok()) {
    WEFT_FUZZ_CHECK(spec.status().code() == weft::Code::kInvalidArgument);
    return 0;
  }
  WEFT_FUZZ_CHECK(!spec->names.empty());
  WEFT_FUZZ_CHECK(spec->exclude == (text[0] == '^'));
  WEFT_FUZZ_CHECK(spec->exact == (text.size() > (spec->exclude ? 1u : 0u) &&
                                  text[spec->exclude ? 1 : 0] == '='));
  for (const std::string& n : spec->names) {
    WEFT_FUZZ_CHECK(!n.empty() && n.find(',') == std::string::npos);
    WEFT_FUZZ_CHECK(IfnameMatches(*spec, n) == !spec->exclude);
  }
  IfnameSpec flipped = *spec;
  flipped.exclude = !flipped.exclude;
  while (!in.empty()) {
    const std::string ifname(in.Until('\n'));
    WEFT_FUZZ_CHECK(IfnameMatches(*spec, ifname) != IfnameMatches(flipped, ifname));
  }
  return 0;
}
