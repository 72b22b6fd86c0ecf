// The store's wire format (see store.h), as pure functions over bytes: no sockets, no
// state, so the parser can be unit-tested and fuzzed on its own.
//
//   request:  u32 total_len | u8 cmd | u32 key_len | key | [u32 val_len | val | i64 arg]
//   response: u32 total_len | u8 status | payload
// total_len counts the bytes after itself. The bracketed tail is present for kSet
// (val = the value, arg = 0) and kAdd (val empty, arg = delta) and absent for kGet and
// kCheck. Integers are little-endian. Responses: kOk with payload = the value (Get),
// nothing (Set), i64 new value (Add), u8 0/1 (Check); kError with payload = a message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace weft::bootstrap {

enum class StoreCmd : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4 };
enum class StoreReply : uint8_t { kOk = 0, kError = 1 };

// Largest key accepted, far below kMaxFrame: keys are names, values carry the data.
inline constexpr size_t kMaxKeyLen = 4096;

struct StoreRequest {
  StoreCmd cmd = StoreCmd::kGet;
  std::string key;
  std::string value;
  int64_t arg = 0;
};

struct ParsedRequest {
  size_t consumed = 0;  // bytes of `bytes` this frame used; 0 = incomplete, read more
  StoreRequest request;
};

// Parses the first request in `bytes`. Ok with consumed == 0 when the frame is not
// complete yet (never asks for more than 4 + max_frame bytes); ProtocolError when the
// bytes cannot be a valid request (bad length, unknown command, a length that overruns
// the frame, trailing bytes inside the frame, an empty or oversized key).
Result<ParsedRequest> ParseRequest(std::string_view bytes, size_t max_frame);

std::string EncodeRequest(const StoreRequest& request);
std::string EncodeReply(StoreReply status, std::string_view payload);

// Little-endian helpers shared by the client and server.
void PutU32(std::string& out, uint32_t v);
void PutI64(std::string& out, int64_t v);
uint32_t GetU32(const char* p);
int64_t GetI64(const char* p);

const char* StoreCmdName(StoreCmd cmd);

}  // namespace weft::bootstrap
