// A small helper that algorithms use to emit one rank's schedule.
//
// Steps go into the current round; NewRound() starts the next one. Within a round the
// builder keeps sends and receives ahead of the local steps (the order the IR runs them
// in), drops empty messages and copies (both ends of a message compute the same count,
// so both drop it) and drops rounds that end up empty. A rank that sits out a tree
// level therefore just has no round for it: rounds are this rank's sequencing only,
// messages are matched per pair of ranks in FIFO order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sched/schedule.h"

namespace weft::sched::algo {

inline Slice In(size_t offset, size_t count) { return {Buf::kInput, offset, count}; }
inline Slice Out(size_t offset, size_t count) { return {Buf::kOutput, offset, count}; }
inline Slice Scratch(size_t offset, size_t count) { return {Buf::kScratch, offset, count}; }

// `s` moved `elems` further into its buffer with a new count (sub-slices of a region).
inline Slice Sub(const Slice& s, size_t elems, size_t count) {
  return {s.buf, s.offset + elems, count};
}

// The rank `distance` steps after `rank` on a ring of `size` (distance may be negative).
inline int RingPeer(int rank, int size, long long distance) {
  long long p = (static_cast<long long>(rank) + distance) % size;
  return static_cast<int>(p < 0 ? p + size : p);
}

// Smallest power of two >= n (n >= 1).
inline int CeilPow2(int n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}
// Largest power of two <= n (n >= 1).
inline int FloorPow2(int n) {
  int p = 1;
  while (p * 2 <= n) p <<= 1;
  return p;
}
// Lowest set bit of v (v > 0).
inline int LowBit(int v) { return v & -v; }

// Where a pipelined schedule's segment lies in each buffer (in elements): while a window
// is set, every slice a step names is moved this far into its buffer, so the code that
// lays out a whole call also lays out one segment of it.
struct Window {
  size_t input = 0;
  size_t output = 0;
  size_t scratch = 0;
};

class Builder {
 public:
  // Starts a new round; later steps go into it.
  void NewRound() { open_ = next_++; }
  // Later steps go into round `index` (and NewRound() continues from there), so that a
  // pipelined schedule can lay one segment's rounds over another's (the steps of each
  // round stay in the order they were added). Rounds left empty are dropped at Finish.
  void SetNextRound(size_t index) {
    open_ = -1;
    next_ = index;
  }
  // The round NewRound() would start.
  size_t NextRound() const { return next_; }
  // Moves every slice added from now on by `window` (Window{} to stop).
  void SetWindow(const Window& window) { window_ = window; }

  // Messages and local steps with zero elements are dropped.
  void Send(int peer, const Slice& src);
  void Recv(int peer, const Slice& dst);
  // Zero-element messages that are kept (barrier notifications).
  void SendToken(int peer);
  void RecvToken(int peer);
  void Reduce(const Slice& dst, const Slice& src);
  // A copy whose source and destination are the same slice is dropped.
  void Copy(const Slice& dst, const Slice& src);
  // Registered buffers (schedule.h): a flag exchange with `peer`, kept like a message;
  // and local steps on `peer`'s buffers, dropped when empty.
  void Sync(int peer);
  void PeerReduce(const Slice& dst, int peer, const Slice& peer_src);
  void PeerRead(const Slice& dst, int peer, const Slice& peer_src);
  void PeerWrite(int peer, const Slice& peer_dst, const Slice& src);

  // Declares that the schedule uses scratch[0, count) (of the window, when one is set).
  void NeedScratch(size_t count) { scratch_ = std::max(scratch_, window_.scratch + count); }

  Schedule Finish(bool inplace_safe = true);

 private:
  struct PendingRound {
    std::vector<Step> comm;
    std::vector<Step> local;
  };
  PendingRound& Current();
  Slice Moved(const Slice& s) const;

  std::vector<PendingRound> rounds_;
  long open_ = -1;   // the round steps go into; -1: none yet (the next one opens)
  size_t next_ = 0;  // the round NewRound() opens
  Window window_;
  size_t scratch_ = 0;
};

// Lays out a pipelined call of `count` elements (per block) in `segments` segments (clamped
// to 1..count): segment k under a window at its offset in the input and output and after
// the scratch of the segments before it (scratch_of(len) elements each), its rounds from
// first + k * stagger. lay(len, first_round) lays out one segment of `len` elements as the
// whole call would be. Returns the segment count used.
template <typename Lay, typename ScratchOf>
int LaySegments(Builder& b, size_t count, int segments, size_t first, size_t stagger,
                const Lay& lay, const ScratchOf& scratch_of) {
  const int n = static_cast<int>(std::clamp<size_t>(segments, 1, std::max<size_t>(count, 1)));
  size_t scratch = 0;
  for (int k = 0; k < n; ++k) {
    const size_t offset = ChunkOffset(count, n, k);
    const size_t len = ChunkSize(count, n, k);
    b.SetWindow({offset, offset, scratch});
    lay(len, first + k * stagger);
    scratch += scratch_of(len);
  }
  b.SetWindow({});
  return n;
}

}  // namespace weft::sched::algo
