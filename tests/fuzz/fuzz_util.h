// Helpers shared by the fuzz targets. A failed property aborts with the file, line and
// condition, so libFuzzer and the replay driver (driver_main.cc) both report it as a
// crash with its reason and keep the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#define WEFT_FUZZ_CHECK(cond)                                                         \
  do {                                                                                \
    if (!(cond)) weft::fuzz::Fail(__FILE__, __LINE__, #cond);                         \
  } while (0)

namespace weft::fuzz {

[[noreturn]] inline void Fail(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "fuzz property failed at %s:%d: %s\n", file, line, cond);
  std::abort();
}

// Reads a fuzz input front to back. Running out is not an error: a short input yields
// zeros and empty strings, so every input, however short, drives the target somewhere.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size)
      : bytes_(reinterpret_cast<const char*>(data), size) {}

  uint8_t Byte() { return pos_ < bytes_.size() ? static_cast<uint8_t>(bytes_[pos_++]) : 0; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(Byte()) << (8 * i);
    return v;
  }
  // Up to `n` bytes (fewer at the end).
  std::string_view Take(size_t n) {
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += s.size();
    return s;
  }
  // The bytes up to the next `sep` (consumed, not returned), or to the end.
  std::string_view Until(char sep) {
    size_t end = bytes_.find(sep, pos_);
    std::string_view s = bytes_.substr(pos_, end == std::string_view::npos ? end : end - pos_);
    pos_ = end == std::string_view::npos ? bytes_.size() : end + 1;
    return s;
  }
  std::string_view Rest() { return Take(bytes_.size()); }
  bool empty() const { return pos_ >= bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace weft::fuzz
