// A growable, 64-byte aligned byte buffer for scratch and temporaries. Grows only, so
// repeated calls of the same size allocate once.
#pragma once

#include <cstdlib>
#include <memory>

namespace weft::comm {

class AlignedBuffer {
 public:
  // A pointer to at least `bytes` bytes (contents unspecified); nullptr on OOM.
  void* Reserve(size_t bytes) {
    if (bytes <= capacity_) return data_.get();
    size_t rounded = (bytes + 63) & ~size_t{63};
    data_.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    capacity_ = data_ ? rounded : 0;
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t capacity_ = 0;
};

}  // namespace weft::comm
