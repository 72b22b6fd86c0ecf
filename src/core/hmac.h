// HMAC-SHA256 (RFC 2104), checked against RFC 4231 and Python's hmac
// (tests/unit/core/hmac_test.cc), and a constant-time comparison for MACs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/sha256.h"

namespace weft {

Digest256 HmacSha256(std::string_view key, std::string_view message);

// Incremental form: the message given in pieces, same result as HmacSha256 of their
// concatenation.
class HmacSha256Builder {
 public:
  explicit HmacSha256Builder(std::string_view key);
  HmacSha256Builder& Update(std::string_view piece);
  Digest256 Final();

 private:
  Sha256 inner_;
  uint8_t outer_key_[Sha256::kBlockBytes];
};

// True when the two buffers are equal; its time depends only on `n`, never on where
// they differ, so a peer cannot learn a valid MAC byte by byte from response times.
bool ConstantTimeEqual(const void* a, const void* b, size_t n);

}  // namespace weft
