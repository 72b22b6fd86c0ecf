#include "exec/streaming_store.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace weft::exec {

void StreamingCopy(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#if defined(__x86_64__)
  const size_t head = std::min(bytes, (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {  // a cache line per iteration
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), v3);
  }
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(d, s, bytes);
#endif
}

void StreamingFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

void ReduceIntoStreaming(ReduceIntoFn fn, size_t esize, void* dst, const void* a, const void* b,
                         size_t count) {
  // 4 KiB: the block stays in L1 between its reduction and its copy out, and the call
  // per block is noise against 4 KiB of arithmetic.
  constexpr size_t kBlockBytes = 4096;
  alignas(64) unsigned char block[kBlockBytes];
  const size_t per_block = std::max<size_t>(1, kBlockBytes / esize);
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(per_block, count - done);
    const size_t off = done * esize;
    fn(block, x + off, y + off, n);
    StreamingCopy(d + off, block, n * esize);
    done += n;
  }
  StreamingFence();
}

}  // namespace weft::exec
