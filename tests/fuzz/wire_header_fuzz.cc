// CheckHeader (transport/wire.h) on 32 arbitrary bytes received as a header, against a
// fixed expected header. Input: 32 header bytes (zero-padded when shorter), then the
// receiving and sending ranks, then the `via` text.
// Properties: never crashes; ok exactly when the bytes equal the expected header; a bad
// magic or version is a ProtocolError naming both ranks; any other difference is an
// InvalidUsage naming both ranks. Describe() accepts any header. PeerFailed (the abort
// frame's cause, with the `via` text as the cause) is bounded and printable.
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "transport/wire.h"

using namespace weft::transport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  unsigned char raw[sizeof(WireHeader)] = {};
  std::string_view head = in.Take(sizeof(raw));
  std::memcpy(raw, head.data(), head.size());
  WireHeader got;
  std::memcpy(&got, raw, sizeof(got));  // as a transport reads it off the wire
  const int self = static_cast<int>(in.U32() % 100000);
  const int peer = static_cast<int>(in.U32() % 100000);
  const std::string via(in.Rest());

  WireHeader expect;
  expect.kind = 0;  // allreduce
  expect.seq = 7;
  expect.step = 3;
  expect.dtype_op = PackDtypeOp(7, 0);
  expect.bytes = 4096;

  weft::Status s = CheckHeader(got, expect, self, peer, via);
  WEFT_FUZZ_CHECK(s.ok() == (std::memcmp(&got, &expect, sizeof(got)) == 0));
  if (!s.ok()) {
    const bool garbage = got.magic != kWireMagic || got.version != kWireVersion;
    WEFT_FUZZ_CHECK(s.code() == (garbage ? weft::Code::kProtocolError : weft::Code::kInvalidUsage));
    WEFT_FUZZ_CHECK(s.message().find("rank " + std::to_string(self)) != std::string::npos);
    WEFT_FUZZ_CHECK(s.message().find("rank " + std::to_string(peer)) != std::string::npos);
  }
  WEFT_FUZZ_CHECK(!Describe(got).empty());
  // An abort frame's cause text comes off the wire too: any bytes give a printable,
  // bounded message naming both ranks.
  weft::Status failed = PeerFailed(self, peer, "tcp", via);
  WEFT_FUZZ_CHECK(failed.code() == weft::Code::kUnavailable);
  WEFT_FUZZ_CHECK(failed.message().size() <= kMaxAbortText + 100);
  for (char c : failed.message()) WEFT_FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20);
  return 0;
}
