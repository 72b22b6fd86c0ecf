// The authentication handshake's parsers (net/auth.h): ParseAuthFrame, and the server
// and client state machines fed bytes from a stranger. First input byte: which side and
// role; the rest: the bytes from the other end.
// Properties: never crashes; a parsed frame has its kind's fixed size and never claims
// more bytes than given; every proper prefix of an accepted frame is "incomplete";
// errors are ProtocolError; without the key no input authenticates — the server never
// reaches done(), the client never accepts a challenge (both depend on fresh random
// nonces the input cannot know); the server answers at most a challenge and a verdict.
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "net/auth.h"

namespace {

using namespace weft;
using namespace weft::net;

const AuthKey& Key() {
  static const AuthKey key = DeriveAuthKey("fuzz", "the job's secret");
  return key;
}

void CheckParse(std::string_view bytes) {
  auto f = ParseAuthFrame(bytes);
  if (!f.ok()) {
    WEFT_FUZZ_CHECK(f.status().code() == Code::kProtocolError);
    return;
  }
  WEFT_FUZZ_CHECK(f->consumed <= bytes.size());
  if (f->consumed == 0) return;
  WEFT_FUZZ_CHECK(f->consumed == kAuthHeadBytes + f->body.size());
  WEFT_FUZZ_CHECK(f->frame == bytes.substr(0, f->consumed));
  for (size_t n = 0; n < f->consumed; ++n) {
    auto prefix = ParseAuthFrame(bytes.substr(0, n));
    WEFT_FUZZ_CHECK(prefix.ok() && prefix->consumed == 0);
  }
  if (f->kind == AuthKind::kHello) {
    auto h = DecodeHello(f->body);
    if (h.ok()) WEFT_FUZZ_CHECK(EncodeHello(h.value()) == f->frame);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const uint8_t mode = in.Byte();
  std::string_view rest = in.Take(1 << 16);
  CheckParse(rest);

  const AuthRole role = (mode & 1) ? AuthRole::kData : AuthRole::kStore;
  if ((mode & 2) == 0) {
    // Server side: the input is what a client sent, fed in two pieces.
    AuthServer server(Key(), role, 7);
    size_t cut = rest.empty() ? 0 : (mode >> 2) % (rest.size() + 1);
    std::string out;
    // What arrived first, then everything (the caller keeps unconsumed bytes).
    auto first = server.Feed(rest.substr(0, cut), &out);
    if (first.ok()) {
      WEFT_FUZZ_CHECK(first.value() <= cut);
      auto second = server.Feed(rest.substr(first.value()), &out);
      if (second.ok()) WEFT_FUZZ_CHECK(second.value() <= rest.size() - first.value());
      else WEFT_FUZZ_CHECK(second.status().code() == Code::kProtocolError);
    } else {
      WEFT_FUZZ_CHECK(first.status().code() == Code::kProtocolError);
    }
    WEFT_FUZZ_CHECK(!server.done());
    WEFT_FUZZ_CHECK(out.size() <= 2 * kAuthHeadBytes + 64 + 1);
  } else {
    // Client side: the input is the server's answer to our hello.
    AuthClient client(Key(), role, 3, 7);
    WEFT_FUZZ_CHECK(client.Hello().ok());
    auto f = ParseAuthFrame(rest);
    if (f.ok() && f->consumed > 0) {
      auto proof = client.Answer(f.value());
      WEFT_FUZZ_CHECK(!proof.ok() && proof.status().code() == Code::kProtocolError);
    }
  }
  return 0;
}
