// The store server's request parser (bootstrap/store_protocol.h) on arbitrary bytes, as
// the server sees them arriving on a connection: frame after frame from one buffer.
// Properties: a parsed frame never claims more bytes than it was given; it re-encodes to
// exactly the bytes it came from (the encoding is canonical); every proper prefix of a
// frame is "incomplete", never an error or a different frame; an error is a
// ProtocolError.
#include <string>
#include <string_view>

#include "bootstrap/store_protocol.h"
#include "fuzz_util.h"

using weft::bootstrap::EncodeRequest;
using weft::bootstrap::ParseRequest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  // A small frame limit as often as the real one, so both sides of the limit are hit.
  const size_t max_frame = (in.Byte() & 1) ? 64 : (64u << 20);
  std::string_view bytes = in.Rest();

  for (int frames = 0; frames < 64 && !bytes.empty(); ++frames) {
    auto parsed = ParseRequest(bytes, max_frame);
    if (!parsed.ok()) {
      WEFT_FUZZ_CHECK(parsed.status().code() == weft::Code::kProtocolError);
      break;
    }
    const size_t used = parsed->consumed;
    if (used == 0) break;  // incomplete
    WEFT_FUZZ_CHECK(used <= bytes.size() && used <= 4 + max_frame);
    const auto& req = parsed->request;
    WEFT_FUZZ_CHECK(!req.key.empty() && req.key.size() <= weft::bootstrap::kMaxKeyLen);
    WEFT_FUZZ_CHECK(EncodeRequest(req) == bytes.substr(0, used));
    // A frame cut short anywhere is "read more", not an error.
    for (size_t cut : {size_t{0}, size_t{3}, size_t{4}, used / 2, used - 1}) {
      if (cut >= used) continue;
      auto partial = ParseRequest(bytes.substr(0, cut), max_frame);
      WEFT_FUZZ_CHECK(partial.ok() && partial->consumed == 0);
    }
    bytes.remove_prefix(used);
  }
  return 0;
}
