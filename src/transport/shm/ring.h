// A single-producer / single-consumer byte ring in shared memory. One process writes,
// another reads; they synchronize only through two monotonically increasing byte
// counters (head: bytes ever written, tail: bytes ever read) with acquire/release
// ordering, so no locks are taken and neither side ever waits.
//
// Thread-safety: exactly one producer calls Write and exactly one consumer calls Read.
// The control block lives in the shared segment; a Ring object is a per-process view
// that also caches the other side's counter to avoid touching its cache line on every
// call. Messages are framed in stamped slots (below): the consumer finds a new message
// by its stamp, and reads head only for a payload streamed after its slot.
//
// Ordering (what a weak memory model, aarch64 or POWER, needs): every store that hands
// bytes to the other side is a release (head and a stamp publish the bytes written
// before them; tail hands freed bytes back), and every load that is followed by reading
// or overwriting those bytes is an acquire. A side's own counter is loaded relaxed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/tsan_sync.h"

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
  // `tsan_key`: both ends' shared key (core/tsan_sync.h), or nullptr.
  Ring(RingControl* ctl, uint8_t* data, uint64_t size, void* tsan_key = nullptr)
      : ctl_(ctl), data_(data), size_(size), mask_(size - 1), tsan_key_(tsan_key) {}

  // Producer: copies up to n bytes in, as many as fit. Returns the count copied. The
  // last byte of a streamed payload (WriteStreamedHeader) goes in only together with the
  // clearing of the next slot's stamp word (ClearNextStamp), so it may wait for up to
  // kSlotAlign + 7 bytes of space more than it needs.
  size_t Write(const void* src, size_t n) {
    const uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
    size_t k = std::min<uint64_t>(n, Free(head, n));
    if (k > 0 && head + k == stream_end_ && !ClearNextStamp(head, stream_end_)) --k;
    if (k == 0) return 0;
    CopyIn(head, src, k);
    TsanRelease(tsan_key_);
    // Release: pairs with the acquire of head in ReadInPlace/Readable; publishes the
    // bytes just copied in (and a cleared stamp word).
    ctl_->head.store(head + k, std::memory_order_release);
    return k;
  }

  // Consumer: copies up to n bytes out, as many as are there. Returns the count copied.
  size_t Read(void* dst, size_t n) {
    auto* out = static_cast<uint8_t*>(dst);
    return ReadInPlace(n, 1, [&](const uint8_t* piece, size_t k) {
      std::memcpy(out, piece, k);
      out += k;
    });
  }

  // Consumer: hands up to `max` readable bytes, rounded down to a multiple of `align`, to
  // f(const uint8_t* piece, size_t n) where they lie in the ring (two calls where they
  // wrap past its end), then frees them. Returns the count. REQUIRES: align is a power of
  // two dividing 64 and the read position is a multiple of it (a streamed payload starts
  // 8-aligned, see kSlotAlign), so no piece splits an element, even at the wrap.
  template <class F>
  size_t ReadInPlace(size_t max, size_t align, F&& f) {
    const uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);  // own counter
    // Head may lag behind tail, cached or even as stored: slots are consumed without
    // reading head, and the producer stores a slot's stamp before its head. Until head
    // passes tail there is nothing to read. Acquire: pairs with the release of head in
    // Write/WriteSlot/RewindIfDrained, so the bytes below it are visible (a cached head
    // was loaded the same way, so the bytes below it were seen then).
    if (cached_head_ < tail + max) cached_head_ = ctl_->head.load(std::memory_order_acquire);
    if (cached_head_ <= tail) return 0;
    TsanAcquire(tsan_key_);
    const size_t k = std::min<uint64_t>(max, cached_head_ - tail) & ~(align - 1);
    if (k == 0) return 0;
    const size_t off = tail & mask_;
    const size_t first = std::min<size_t>(k, size_ - off);
    f(static_cast<const uint8_t*>(data_ + off), first);
    if (k > first) f(static_cast<const uint8_t*>(data_), k - first);
    // Release: pairs with the acquire of tail in Free/RewindIfDrained; the producer
    // overwrites these bytes only after f's reads of them.
    ctl_->tail.store(tail + k, std::memory_order_release);
    return k;
  }

  // --- Message slots --------------------------------------------------------------
  // A message starts at the next multiple of kSlotAlign (64: a cache line) at or after
  // the end of the one before, with an 8-byte stamp: (n + 1) << 2 | kind, n counting the
  // slots the producer has written. The producer stores the stamp last (release), so a
  // consumer that loads the stamp it expects (acquire) sees everything the slot
  // announces without reading the head counter, whose cache line would otherwise travel
  // between the two cores with every message; a small message then costs one line
  // transfer each way (Open MPI's "fast box" works the same way). A stale stamp in the
  // ring always holds an older count, so it never reads as the one expected. Stale
  // payload could (an int64 13 is slot 3's kWhole stamp), so where the next slot will go
  // the producer clears the stamp word before it publishes the end of the message before
  // it (ClearNextStamp): there the consumer finds either that slot's stamp or zero.
  //   kWhole:    header and payload follow the stamp, all published by it.
  //   kStreamed: the header follows, published by the stamp; the payload follows it as
  //              a byte stream published by head (Write/Read), as space frees up.
  //   kRewind:   the producer went back to the ring's start (RewindIfDrained).
  enum class SlotKind : uint64_t { kNone = 0, kWhole = 1, kStreamed = 2, kRewind = 3 };
  static constexpr uint64_t kSlotAlign = 64;
  static constexpr uint64_t kStampBytes = sizeof(uint64_t);

  // Producer, at a message boundary: writes a kWhole slot holding a (na bytes) then b
  // (nb bytes), all of it or nothing. Returns whether it fit (with the next slot's stamp
  // word: ClearNextStamp).
  bool WriteWhole(const void* a, size_t na, const void* b, size_t nb) {
    return WriteSlot(SlotKind::kWhole, a, na, b, nb, 0);
  }

  // Producer, at a message boundary: writes a kStreamed slot holding the n-byte header;
  // the payload, `payload_bytes` of it, follows with Write. Returns whether it fit.
  bool WriteStreamedHeader(const void* header, size_t n, uint64_t payload_bytes) {
    return WriteSlot(SlotKind::kStreamed, header, n, nullptr, 0, payload_bytes);
  }

  // Producer, at a message boundary only: when the consumer has read everything and the
  // next slot is at least `window` bytes into the ring, writes a kRewind slot there and
  // moves the write position on to the ring's start. A stream of small messages then
  // keeps reusing the first few KiB (cache lines and pages both cores already hold)
  // instead of walking the whole ring onto cold lines. Returns true if it rewound.
  bool RewindIfDrained(uint64_t window) {
    const uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
    const uint64_t slot = AlignUp(head);
    const uint64_t off = slot & mask_;
    if (off < window || off == 0) return false;
    if (cached_tail_ != head) {
      // Acquire: pairs with the release of tail in ReadInPlace/ConsumeSlot; the consumer
      // is done with every byte before it, which the stamp below may overwrite.
      cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
      if (cached_tail_ != head) return false;  // the consumer is still reading: not now
    }
    // The ring is empty, so all of it is free: skipping to its end overwrites nothing,
    // and the next slot's stamp word, at the ring's start, may be cleared.
    const uint64_t next = slot + (size_ - off);
    ClearStamp(next);
    Stamp(slot, SlotKind::kRewind);  // publishes the cleared word too
    TsanRelease(tsan_key_);
    // Release: pairs with the acquire of head in ReadInPlace/Readable (the consumer
    // follows the stamp, not head; head only has to move on).
    ctl_->head.store(next, std::memory_order_release);
    return true;
  }

  // Consumer, at a message boundary: the kind of the next slot, kNone while the producer
  // has not written it yet.
  SlotKind PeekSlot() {
    const uint64_t slot = AlignUp(ctl_->tail.load(std::memory_order_relaxed));  // own counter
    // Acquire: pairs with the release in Stamp; the slot's bytes (header, payload of a
    // kWhole slot) and the next slot's cleared stamp word are visible once it matches.
    const uint64_t stamp =
        std::atomic_ref<uint64_t>(*StampAt(slot)).load(std::memory_order_acquire);
    if ((stamp >> 2) != slots_read_ + 1) return SlotKind::kNone;
    TsanAcquire(tsan_key_);
    return static_cast<SlotKind>(stamp & 3);
  }

  // Consumer, after PeekSlot returned kWhole or kStreamed: copies n bytes of the slot,
  // `skip` bytes past its stamp. The caller knows from the header how many there are.
  void CopyFromSlot(void* dst, size_t n, size_t skip = 0) const {
    const uint64_t slot = AlignUp(ctl_->tail.load(std::memory_order_relaxed));
    CopyOut(slot + kStampBytes + skip, dst, n);
  }

  // Consumer: consumes the slot PeekSlot saw, with the n bytes after its stamp (kWhole:
  // header and payload; kStreamed: the header, then Read the payload; kRewind: ignored,
  // the rest of the ring up to its start is skipped as the producer skipped it).
  void ConsumeSlot(SlotKind kind, size_t n) {
    const uint64_t slot = AlignUp(ctl_->tail.load(std::memory_order_relaxed));
    ++slots_read_;
    const uint64_t end =
        kind == SlotKind::kRewind ? slot + (size_ - (slot & mask_)) : slot + kStampBytes + n;
    // Release: pairs with the acquire of tail in Free/RewindIfDrained; the slot's bytes
    // were copied out (CopyFromSlot) before the producer may overwrite them.
    ctl_->tail.store(end, std::memory_order_release);
  }

  // Consumer: bytes available to read now.
  size_t Readable() {
    // Acquire: pairs with the release of head in Write/WriteSlot/RewindIfDrained.
    cached_head_ = ctl_->head.load(std::memory_order_acquire);
    TsanAcquire(tsan_key_);
    const uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);
    return cached_head_ > tail ? cached_head_ - tail : 0;  // head may lag (see Read)
  }

  uint64_t size() const { return size_; }

 private:
  // Producer: the free bytes at write position `head`, looking at the consumer's tail
  // only when the cached view shows fewer than `want`.
  uint64_t Free(uint64_t head, size_t want) {
    // Acquire: pairs with the release of tail in ReadInPlace/ConsumeSlot; the consumer's
    // reads of the freed bytes come before this side overwrites them. (A cached tail was
    // loaded the same way.)
    if (size_ - (head - cached_tail_) < want)
      cached_tail_ = ctl_->tail.load(std::memory_order_acquire);
    return size_ - (head - cached_tail_);
  }
  // Writes a slot of `kind` holding a then b, all or nothing; returns whether it fit. A
  // payload of `stream` bytes follows with Write; with none, the slot ends its message
  // and clears the next slot's stamp word too.
  bool WriteSlot(SlotKind kind, const void* a, size_t na, const void* b, size_t nb,
                 uint64_t stream) {
    const uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
    const uint64_t slot = AlignUp(head);
    const uint64_t end = slot + kStampBytes + na + nb;
    // With no payload to follow, the space checked reaches the next slot's stamp word.
    const uint64_t need = (stream == 0 ? AlignUp(end) + kStampBytes : end) - head;
    if (Free(head, need) < need) return false;
    if (stream == 0) ClearStamp(AlignUp(end));
    stream_end_ = stream == 0 ? kNoStream : end + stream;
    CopyIn(slot + kStampBytes, a, na);
    CopyIn(slot + kStampBytes + na, b, nb);
    Stamp(slot, kind);
    // Release: pairs with the acquire of head in ReadInPlace/Readable (PeekSlot needs
    // only the stamp).
    ctl_->head.store(end, std::memory_order_release);
    return true;
  }
  // Producer, with the write position at `head`, before publishing `end`, the end of a
  // message: clears the stamp word where the next slot will go, AlignUp(end), unless the
  // consumer has not freed it yet (then returns false and clears nothing). Stale bytes
  // there are otherwise read by the consumer's PeekSlot as soon as it passes `end`.
  bool ClearNextStamp(uint64_t head, uint64_t end) {
    const uint64_t want = AlignUp(end) + kStampBytes - head;
    if (Free(head, want) < want) return false;
    ClearStamp(AlignUp(end));
    return true;
  }
  // Relaxed: published by the release that follows (a stamp or head).
  void ClearStamp(uint64_t slot) {
    std::atomic_ref<uint64_t>(*StampAt(slot)).store(0, std::memory_order_relaxed);
  }
  static uint64_t AlignUp(uint64_t pos) { return (pos + kSlotAlign - 1) & ~(kSlotAlign - 1); }
  uint64_t* StampAt(uint64_t slot) const {
    return reinterpret_cast<uint64_t*>(data_ + (slot & mask_));
  }
  // Publishes the slot at `slot` (everything written into it before is visible to a
  // consumer that loads the stamp with acquire).
  void Stamp(uint64_t slot, SlotKind kind) {
    ++slots_written_;
    TsanRelease(tsan_key_);
    // Release: pairs with the acquire in PeekSlot.
    std::atomic_ref<uint64_t>(*StampAt(slot))
        .store(slots_written_ << 2 | static_cast<uint64_t>(kind), std::memory_order_release);
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
  uint64_t cached_tail_ = 0;    // producer's last view of tail
  uint64_t cached_head_ = 0;    // consumer's last view of head
  uint64_t slots_written_ = 0;  // producer: slots stamped so far
  uint64_t slots_read_ = 0;     // consumer: slots consumed so far
  void* tsan_key_ = nullptr;    // TSan builds: ties this view to the other end's
  // Producer: where the streamed payload being written ends (Write clears the next
  // slot's stamp word with its last byte); kNoStream between messages.
  static constexpr uint64_t kNoStream = ~uint64_t{0};
  uint64_t stream_end_ = kNoStream;
};

}  // namespace weft::transport::shm
