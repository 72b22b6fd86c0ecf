// The unique id text (comm/unique_id.h): ids cross process boundaries through the user's
// own channel. Properties: never crashes; never resolves names (parsing is numeric only);
// an id it accepts has a secret of kUniqueIdSecretHex lower-case hex digits, formats back
// to the same fields, and fits in a weftUniqueId with its NUL; an id derived from it
// (weftUniqueIdDerive) parses, keeps its store and secret, and fits too.
#include <string>

#include "comm/unique_id.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto id = weft::comm::ParseUniqueId(text);
  if (!id.ok()) {
    WEFT_FUZZ_CHECK(id.status().code() == weft::Code::kInvalidArgument);
    return 0;
  }
  WEFT_FUZZ_CHECK(id->secret.size() == weft::comm::kUniqueIdSecretHex);
  std::string formatted = weft::comm::FormatUniqueId(id->store, id->nonce, id->secret);
  WEFT_FUZZ_CHECK(formatted.size() < 128);
  auto again = weft::comm::ParseUniqueId(formatted);
  WEFT_FUZZ_CHECK(again.ok() && again->nonce == id->nonce && again->secret == id->secret &&
                  again->store.ToString() == id->store.ToString());
  uint64_t salt = size > 0 ? data[0] * 0x0101010101010101ULL : 0;
  auto derived = weft::comm::DeriveUniqueId(text, salt);
  WEFT_FUZZ_CHECK(derived.ok() && derived->size() < 128);
  auto parsed = weft::comm::ParseUniqueId(derived.value());
  WEFT_FUZZ_CHECK(parsed.ok() && parsed->secret == id->secret &&
                  parsed->store.ToString() == id->store.ToString());
  return 0;
}
