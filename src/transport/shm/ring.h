// A single-producer / single-consumer byte ring in shared memory. One process writes,
// another reads; they synchronize only through two monotonically increasing byte
// counters (head: bytes ever written, tail: bytes ever read) with acquire/release
// ordering, so no locks are taken and neither side ever waits.
//
// Thread-safety: exactly one producer calls Write and exactly one consumer calls Read.
// The control block lives in the shared segment; a Ring object is a per-process view
// that also caches the other side's counter to avoid touching its cache line on every
// call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weft::transport::shm {

// head and tail sit on separate cache lines: each is written by one side only, so
// keeping them apart avoids false sharing between producer and consumer.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head{0};  // written by the producer
  alignas(64) std::atomic<uint64_t> tail{0};  // written by the consumer
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "ring counters must be lock-free to be shared between processes");

class Ring {
 public:
  Ring() = default;
  // REQUIRES: size is a power of two; data has `size` bytes.
  Ring(RingControl* ctl, uint8_t* data, uint64_t size)
      : ctl_(ctl), data_(data), size_(size), mask_(size - 1) {}

  // Producer: copies up to n bytes in, as many as fit. Returns the count copied.
  size_t Write(const void* src, size_t n) {
    uint64_t head = ctl_->head.load(std::memory_order_relaxed);
    size_t k = std::min<uint64_t>(n, Free(head, n));
    if (k == 0) return 0;
    CopyIn(head, src, k);
    ctl_->head.store(head + k, std::memory_order_release);
    return k;
  }

  // Consumer: copies up to n bytes out, as many as are there. Returns the count copied.
  size_t Read(void* dst, size_t n) {
    size_t k = Peek(dst, n);
    if (k > 0) Consume(k);
    return k;
  }

  // Producer: copies the concatenation of a (na bytes) and b (nb bytes) in, all of it or
  // nothing, and publishes it with one store of head: a small message's header and
  // payload reach the consumer as one update instead of two. Returns whether it fit.
  bool WriteBoth(const void* a, size_t na, const void* b, size_t nb) {
    const size_t n = na + nb;
    uint64_t head = ctl_->head.load(std::memory_order_relaxed);
    if (Free(head, n) < n) return false;
    CopyIn(head, a, na);
    CopyIn(head + na, b, nb);
    ctl_->head.store(head + n, std::memory_order_release);
    return true;
  }

  // Consumer: copies up to n readable bytes out without consuming them. Returns the
  // count copied. Lets the consumer look at a message's first bytes (a header, or the
  // producer's rewind marker) and consume exactly what they turn out to be.
  // `skip` bytes past the read position are left out (0 or fewer than are readable).
  size_t Peek(void* dst, size_t n, size_t skip = 0) {
    uint64_t tail = ctl_->tail.load(std::memory_order_relaxed) + skip;
    if (cached_head_ - tail < n) cached_head_ = ctl_->head.load(std::memory_order_acquire);
    size_t k = std::min<uint64_t>(n, cached_head_ - tail);
    CopyOut(tail, dst, k);
    return k;
  }

  // Consumer: consumes n bytes already seen through Peek.
  void Consume(size_t n) {
    uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);
    ctl_->tail.store(tail + n, std::memory_order_release);
  }

  // Producer, at a message boundary only: when the consumer has read everything and the
  // write position is at least `window` bytes into the ring, writes the 4-byte `marker`
  // there and moves the write position on to the ring's start. A stream of small
  // messages then keeps reusing the first few KiB (cache lines and pages both cores
  // already hold) instead of walking the whole ring onto cold lines. The consumer must
  // recognise the marker at a message boundary and call SkipToStart(). Returns true if
  // it rewound.
  bool RewindIfDrained(uint64_t window, uint32_t marker) {
    uint64_t head = ctl_->head.load(std::memory_order_relaxed);
    uint64_t off = head & mask_;
    if (off < window || off + sizeof(marker) > size_) return false;
    if (cached_tail_ != head) {
      cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
      if (cached_tail_ != head) return false;  // the consumer is still reading: not now
    }
    std::memcpy(data_ + off, &marker, sizeof(marker));
    // The ring is empty, so all of it is free: skipping to its end overwrites nothing.
    ctl_->head.store(head + (size_ - off), std::memory_order_release);
    return true;
  }

  // Consumer: just after reading the producer's rewind marker, skips what the producer
  // skipped (the rest of the ring up to its start).
  void SkipToStart() {
    uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);
    uint64_t off = tail & mask_;
    if (off != 0) ctl_->tail.store(tail + (size_ - off), std::memory_order_release);
  }

  // Consumer: bytes available to read now.
  size_t Readable() {
    cached_head_ = ctl_->head.load(std::memory_order_acquire);
    return cached_head_ - ctl_->tail.load(std::memory_order_relaxed);
  }

  uint64_t size() const { return size_; }

 private:
  // Producer: the free bytes at write position `head`, looking at the consumer's tail
  // only when the cached view shows fewer than `want`.
  uint64_t Free(uint64_t head, size_t want) {
    if (size_ - (head - cached_tail_) < want)
      cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
    return size_ - (head - cached_tail_);
  }
  // Both copy nothing for n == 0, where src or dst may be null (an empty message's
  // buffer), which memcpy does not allow even for zero bytes.
  void CopyIn(uint64_t pos, const void* src, size_t n) {
    if (n == 0) return;
    size_t off = pos & mask_;
    size_t first = std::min<size_t>(n, size_ - off);
    std::memcpy(data_ + off, src, first);
    std::memcpy(data_, static_cast<const uint8_t*>(src) + first, n - first);
  }
  void CopyOut(uint64_t pos, void* dst, size_t n) const {
    if (n == 0) return;
    size_t off = pos & mask_;
    size_t first = std::min<size_t>(n, size_ - off);
    std::memcpy(dst, data_ + off, first);
    std::memcpy(static_cast<uint8_t*>(dst) + first, data_, n - first);
  }

  RingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mask_ = 0;
  uint64_t cached_tail_ = 0;  // producer's last view of tail
  uint64_t cached_head_ = 0;  // consumer's last view of head
};

}  // namespace weft::transport::shm
