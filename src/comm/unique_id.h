// The text inside a weftUniqueId: "weft-id-1 <store address> <16 hex digits>". The id
// travels between processes through the user's own channel, so parsing is strict and
// never resolves names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/socket.h"

namespace weft::comm {

struct UniqueIdFields {
  net::SockAddr store;  // numeric address of the rendezvous store
  uint64_t nonce = 0;   // the communicator id
};

std::string FormatUniqueId(const net::SockAddr& store, uint64_t nonce);
// InvalidArgument for anything FormatUniqueId could not have produced.
Result<UniqueIdFields> ParseUniqueId(std::string_view text);
// Exactly 16 lower- or upper-case hex digits.
Result<uint64_t> ParseHex64(std::string_view text);

}  // namespace weft::comm
