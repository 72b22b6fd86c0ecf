// Cache blocking of a round's local steps (Executor::RunBlocked).
//
// The single-pass schedules on registered buffers (sched/algorithms/single_pass.h) end a
// round with several elementwise steps over the same elements: the allreduce reduces its
// chunk of every input into its output, then copies that output into every peer's;
// the allgather copies its input into every output. Run one after the other over
// megabytes, each step reads back from memory what the step before it just wrote (or
// read). Run piece by piece, a piece of kBlockBytes goes through every step while it
// is in cache, and memory sees each byte once. The schedule is unchanged: this is only
// an order of execution, allowed where it computes the same.
#include <algorithm>
#include <cstring>
#include <vector>

#include "exec/executor.h"

namespace weft::exec {
namespace {

using sched::Slice;
using sched::Step;
using sched::StepKind;

// Small enough that the pieces of every buffer a step touches stay in a core's L2 together.
constexpr size_t kBlockBytes = 64 << 10;
// Rounds moving less than this run step by step: they fit in cache anyway.
constexpr size_t kBlockMinBytes = 1 << 20;

bool Elementwise(StepKind k) {
  return k == StepKind::kCopy || k == StepKind::kReduce || sched::TouchesPeer(k);
}

struct Region {
  const char* begin;
  size_t bytes;
};

}  // namespace

// Piece by piece computes what step by step does when every step is elementwise over the
// same number of elements and element i of a step touches only element i of the others:
// no two of the steps' regions overlap unless they start at the same address (an
// in-place call's input is its output, element for element).
bool Executor::RunBlocked(const std::vector<Step>& steps, size_t first) {
  if (peers_ == nullptr || steps.size() < first + 2) return false;
  const size_t count = steps[first].dst.count;
  if (count * esize_ < kBlockMinBytes) return false;
  std::vector<Region> regions;
  regions.reserve(2 * (steps.size() - first));
  for (size_t i = first; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (!Elementwise(s.kind) || s.dst.count != count || s.src.count != count) return false;
    const bool peer_src = s.kind == StepKind::kPeerReduce || s.kind == StepKind::kPeerRead;
    const bool peer_dst = s.kind == StepKind::kPeerWrite;
    regions.push_back({peer_src ? PeerPtr(s.peer, s.src) : static_cast<char*>(Ptr(s.src)),
                       count * esize_});
    regions.push_back({peer_dst ? PeerPtr(s.peer, s.dst) : static_cast<char*>(Ptr(s.dst)),
                       count * esize_});
  }
  for (size_t a = 0; a < regions.size(); ++a) {
    for (size_t b = a + 1; b < regions.size(); ++b) {
      const Region& x = regions[a];
      const Region& y = regions[b];
      const bool overlap = x.begin < y.begin + y.bytes && y.begin < x.begin + x.bytes;
      if (overlap && x.begin != y.begin) return false;
    }
  }
  const size_t piece = std::max<size_t>(1, kBlockBytes / esize_);
  for (size_t off = 0; off < count; off += piece) {
    const size_t n = std::min(piece, count - off);
    for (size_t i = first; i < steps.size();) i += RunLocalPiece(steps, i, off, n);
  }
  return true;
}

size_t Executor::RunLocalPiece(const std::vector<Step>& steps, size_t i, size_t off, size_t n) {
  auto sub = [&](Slice s) {
    s.offset += off;
    s.count = n;
    return s;
  };
  Step step = steps[i];
  step.src = sub(step.src);
  step.dst = sub(step.dst);
  switch (step.kind) {
    case StepKind::kReduce:
      reduce_(Ptr(step.dst), Ptr(step.src), n);
      return 1;
    case StepKind::kCopy: {
      void* dst = Ptr(step.dst);
      const void* src = Ptr(step.src);
      if (i + 1 < steps.size() && FusesWithNext(steps[i], steps[i + 1])) {
        const Step& next = steps[i + 1];
        const void* y = next.kind == StepKind::kPeerReduce ? PeerPtr(next.peer, sub(next.src))
                                                           : Ptr(sub(next.src));
        reduce_into_(dst, src, y, n);  // normal stores: the next steps read it back
        return 2;
      }
      if (dst != src) std::memcpy(dst, src, n * esize_);
      return 1;
    }
    default:
      (void)RunPeerStep(step);  // peers_ is set: RunBlocked checked it
      return 1;
  }
}

}  // namespace weft::exec
