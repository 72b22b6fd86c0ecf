// Pipelined chain ("ring") broadcast: the ranks form a chain root, root+1, ..., root-1
// and the message is cut into segments. In round t the rank at chain position p receives
// segment t - p + 1 from its predecessor while forwarding segment t - p to its successor,
// so after a fill of size-1 rounds every link carries a segment per round: about
// (segments + size - 2) rounds of count/segments elements, close to count·β for large
// messages whatever the world size.
//
// The segment count is a first guess to be tuned by measurement: at least `size` (so the
// pipeline fills), at most one segment per kSegmentElems elements, never more than count;
// two ranks have no chain to fill, and one segment saves the rounds (over shm a large
// message streams through the ring anyway, or goes single-copy where that is enabled).
// The root sends from its input and copies it to its output in the round of its last
// send, where the executor runs the copy while that segment is in flight
// (Executor::PlanEarlyCopy) and no other rank waits for it; others receive into and
// forward from the output. A round's receive and send are different segments.
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {
namespace {

constexpr size_t kSegmentElems = 16384;

// The chain's segments for `count` elements on `size` ranks (see the top of the file).
size_t RingBroadcastSegments(size_t count, int size) {
  if (size <= 2) return std::min<size_t>(count, 1);
  const size_t by_size = (count + kSegmentElems - 1) / kSegmentElems;
  return std::min(count, std::max(static_cast<size_t>(size), by_size));
}

}  // namespace

Schedule BuildBroadcastRing(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const size_t count = spec.count;
  const int pos = RingPeer(spec.rank, n, -spec.root);  // position in the chain
  const bool is_root = pos == 0;
  if (n == 1 || count == 0) {
    if (is_root) b.Copy(Out(0, count), In(0, count));
    return b.Finish();
  }

  const int segs = static_cast<int>(std::min<size_t>(RingBroadcastSegments(count, n), 1 << 30));
  const Buf from = is_root ? Buf::kInput : Buf::kOutput;
  auto seg = [&](Buf buf, long long j) {
    const int i = static_cast<int>(j);
    return Slice{buf, ChunkOffset(count, segs, i), ChunkSize(count, segs, i)};
  };
  // Rounds t = 0 .. segs + n - 3 cover the whole pipeline; this rank is busy in
  // rounds [pos - 1, pos + segs - 1] clipped to its role.
  for (long long t = 0; t < static_cast<long long>(segs) + n - 2; ++t) {
    const long long recv_j = t - pos + 1;
    const long long send_j = t - pos;
    b.NewRound();
    if (pos > 0 && recv_j >= 0 && recv_j < segs) {
      b.Recv(RingPeer(spec.rank, n, -1), seg(Buf::kOutput, recv_j));
    }
    if (pos < n - 1 && send_j >= 0 && send_j < segs) {
      b.Send(RingPeer(spec.rank, n, 1), seg(from, send_j));
      if (is_root && send_j == segs - 1) b.Copy(Out(0, count), In(0, count));
    }
  }
  return b.Finish();
}

// The chain root, root+1, ..., root-1, one hop per rank, down which the segments go
// pipelined (cost_model.h's PipelineUs: the first segment's way down plus one step of
// all hops per further segment). An empty message costs nothing (no messages).
double EstimateBroadcastRingUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  if (q.count == 0) return 0;
  const size_t segs = RingBroadcastSegments(q.count, p);
  std::vector<std::vector<int>> hops;
  for (int pos = 0; pos + 1 < p; ++pos) {
    hops.emplace_back(p, -1);
    hops.back()[RingPeer(q.root, p, pos)] = RingPeer(q.root, p, pos + 1);
  }
  return PipelineUs(q.topology, hops, q.bytes() / double(segs), segs, c);
}

}  // namespace weft::sched::algo
