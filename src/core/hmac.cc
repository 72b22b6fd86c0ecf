#include "core/hmac.h"

#include <cstring>

namespace weft {

HmacSha256Builder::HmacSha256Builder(std::string_view key) {
  // Keys longer than a block are hashed first; shorter ones are zero-padded.
  uint8_t k[Sha256::kBlockBytes] = {};
  if (key.size() > Sha256::kBlockBytes) {
    Digest256 d = Sha256Of(key);
    std::memcpy(k, d.data(), d.size());
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  uint8_t inner_key[Sha256::kBlockBytes];
  for (size_t i = 0; i < Sha256::kBlockBytes; ++i) {
    inner_key[i] = k[i] ^ 0x36;
    outer_key_[i] = k[i] ^ 0x5c;
  }
  inner_.Update(inner_key, sizeof(inner_key));
}

HmacSha256Builder& HmacSha256Builder::Update(std::string_view piece) {
  inner_.Update(piece);
  return *this;
}

Digest256 HmacSha256Builder::Final() {
  Digest256 inner = inner_.Final();
  Sha256 outer;
  outer.Update(outer_key_, sizeof(outer_key_));
  outer.Update(inner.data(), inner.size());
  return outer.Final();
}

Digest256 HmacSha256(std::string_view key, std::string_view message) {
  return HmacSha256Builder(key).Update(message).Final();
}

bool ConstantTimeEqual(const void* a, const void* b, size_t n) {
  // volatile keeps the compiler from turning the loop into an early-exit memcmp.
  const volatile uint8_t* x = static_cast<const volatile uint8_t*>(a);
  const volatile uint8_t* y = static_cast<const volatile uint8_t*>(b);
  uint8_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

}  // namespace weft
