// HMAC-SHA256 (RFC 2104) and a constant-time comparison for MACs, from libcrypto
// (OpenSSL 3): security code is linked from a maintained library, not written here.
// Checked against RFC 4231 and Python's hmac (tests/unit/core/hmac_test.cc).
// Thread-safety: a builder is not shared; the free functions are reentrant.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weft {

using Digest256 = std::array<uint8_t, 32>;

Digest256 HmacSha256(std::string_view key, std::string_view message);

// Incremental form: the message given in pieces, same result as HmacSha256 of their
// concatenation. The pieces are gathered and MACed once at Final: weft's messages are a
// few hundred bytes (a label, a hello frame, a nonce), so one libcrypto call is simpler
// than keeping an EVP_MAC_CTX alive across calls.
class HmacSha256Builder {
 public:
  explicit HmacSha256Builder(std::string_view key) : key_(key) {}
  HmacSha256Builder& Update(std::string_view piece) {
    message_ += piece;
    return *this;
  }
  Digest256 Final() const { return HmacSha256(key_, message_); }

 private:
  std::string key_;
  std::string message_;
};

// True when the two buffers are equal; its time depends only on `n`, never on where
// they differ, so a peer cannot learn a valid MAC byte by byte from response times.
bool ConstantTimeEqual(const void* a, const void* b, size_t n);

}  // namespace weft
