// SHA-256 (FIPS 180-4), for the HMAC that authenticates connections (core/hmac.h).
// Written here rather than linked so that libweft gains no runtime dependency; checked
// against the FIPS 180-4 examples and against Python's hashlib on random inputs
// (tests/unit/core/sha256_test.cc).
// Thread-safety: a Sha256 object is not shared; the free function is reentrant.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weft {

using Digest256 = std::array<uint8_t, 32>;

class Sha256 {
 public:
  static constexpr size_t kBlockBytes = 64;
  Sha256();
  void Update(const void* data, size_t n);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  Digest256 Final();

 private:
  void Compress(const uint8_t* block);
  uint32_t state_[8];
  uint8_t block_[kBlockBytes];
  size_t block_len_ = 0;
  uint64_t total_bytes_ = 0;
};

Digest256 Sha256Of(std::string_view data);

}  // namespace weft
