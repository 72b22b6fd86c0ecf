#include "core/hmac.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <cstdlib>

namespace weft {

Digest256 HmacSha256(std::string_view key, std::string_view message) {
  Digest256 out{};
  unsigned int len = 0;
  // A zero-length key is legal HMAC; libcrypto wants a non-null pointer for it.
  static const unsigned char kEmpty = 0;
  const void* k = key.empty() ? static_cast<const void*>(&kEmpty) : key.data();
  const unsigned char* m = reinterpret_cast<const unsigned char*>(message.data());
  if (message.empty()) m = &kEmpty;
  if (HMAC(EVP_sha256(), k, static_cast<int>(key.size()), m, message.size(), out.data(),
           &len) == nullptr ||
      len != out.size()) {
    // libcrypto's built-in SHA-256 fails only when it cannot allocate or its
    // configuration (OPENSSL_CONF) disables the default provider. Going on would
    // authenticate with a MAC that is not one, so this stops like an allocation failure.
    char why[256];
    ERR_error_string_n(ERR_get_error(), why, sizeof(why));
    std::fprintf(stderr, "weft: libcrypto HMAC-SHA256 failed: %s\n", why);
    std::abort();
  }
  return out;
}

bool ConstantTimeEqual(const void* a, const void* b, size_t n) {
  return n == 0 || CRYPTO_memcmp(a, b, n) == 0;
}

}  // namespace weft
