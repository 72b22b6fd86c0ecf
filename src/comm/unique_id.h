// The text inside a weftUniqueId: "weft-id-2 <store address> <16 hex digits> <32 hex
// digits>": the store, the communicator id, and the job's secret (the store and the
// data connections authenticate with a key derived from it, unless WEFT_SECRET is set).
// The id travels between processes through the user's own channel, so parsing is strict
// and never resolves names. The longest id (a scoped IPv6 address) is 123 bytes, inside
// WEFT_UNIQUE_ID_BYTES with its terminating NUL.
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
  std::string secret;   // kUniqueIdSecretHex lower-case hex digits
};

inline constexpr size_t kUniqueIdSecretHex = 32;  // 128 random bits

std::string FormatUniqueId(const net::SockAddr& store, uint64_t nonce, const std::string& secret);
// InvalidArgument for anything FormatUniqueId could not have produced.
Result<UniqueIdFields> ParseUniqueId(std::string_view text);
// The id of another communicator on the same store and secret as `text` (a valid id):
// its nonce hashed with `salt` (weftUniqueIdDerive).
Result<std::string> DeriveUniqueId(std::string_view text, uint64_t salt);
// Exactly 16 lower- or upper-case hex digits.
Result<uint64_t> ParseHex64(std::string_view text);

}  // namespace weft::comm
