// Bruck all-to-all: ceil(lg p) rounds instead of p-1, at the price of sending about half
// the data in every round: best for small blocks.
//
// Scratch layout (c = count): slots [0, size·c) — slot i holds a block in flight — then
// a send area and a receive area of `max_moved` blocks each.
//  1. Local rotation: slot i = input block (r + i), the block destined to rank r + i.
//  2. For each bit d = 1, 2, 4, ... < size: the slots whose index has bit d set are
//     packed into the send area (copies of contiguous runs), sent to r + d, and the
//     same slots arrive from r - d into the receive area and are unpacked over them.
//     Afterwards slot i holds the block that rank r - (i mod 2d) sent to rank
//     r - (i mod 2d) + i; after all bits, slot i holds rank (r - i)'s block for rank r.
//  3. Local unrotation: output block (r - i) = slot i.
// Packing for the next round happens in the same round's local steps, after unpacking.
//
// In place is safe: the input is read only by the first (local-only) round, and the
// output is written only by the last round's local steps.
#include <algorithm>
#include <vector>

#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"

namespace weft::sched::algo {
namespace {

// The runs of slot indices in [0, n) with bit d set: [j·2d + d, min(j·2d + 2d, n)).
struct Run {
  int first;
  int num;
};
std::vector<Run> RunsWithBit(int n, int d) {
  std::vector<Run> runs;
  for (int start = d; start < n; start += 2 * d) runs.push_back({start, std::min(d, n - start)});
  return runs;
}

int Moved(int n, int d) {
  int total = 0;
  for (const Run& run : RunsWithBit(n, d)) total += run.num;
  return total;
}

}  // namespace

Schedule BuildAllToAllBruck(const CollectiveSpec& spec) {
  Builder b;
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  auto blocks = [&](Buf buf, size_t base, int first, int num) {
    return Slice{buf, base + static_cast<size_t>(first) * c, static_cast<size_t>(num) * c};
  };
  if (n == 1) {
    b.Copy(Out(0, c), In(0, c));
    return b.Finish();
  }
  int max_moved = 0;
  for (int d = 1; d < n; d <<= 1) max_moved = std::max(max_moved, Moved(n, d));
  const size_t send_base = static_cast<size_t>(n) * c;
  const size_t recv_base = send_base + static_cast<size_t>(max_moved) * c;
  b.NeedScratch(recv_base + static_cast<size_t>(max_moved) * c);

  auto pack = [&](int d) {
    int packed = 0;
    for (const Run& run : RunsWithBit(n, d)) {
      b.Copy(blocks(Buf::kScratch, send_base, packed, run.num),
             blocks(Buf::kScratch, 0, run.first, run.num));
      packed += run.num;
    }
  };

  // 1. Rotate: slots [0, n - r) <- input blocks [r, n); slots [n - r, n) <- blocks [0, r).
  b.NewRound();
  b.Copy(blocks(Buf::kScratch, 0, 0, n - r), blocks(Buf::kInput, 0, r, n - r));
  b.Copy(blocks(Buf::kScratch, 0, n - r, r), blocks(Buf::kInput, 0, 0, r));
  pack(1);

  // 2. One exchange per bit.
  for (int d = 1; d < n; d <<= 1) {
    b.NewRound();
    const int moved = Moved(n, d);
    b.Send(RingPeer(r, n, d), blocks(Buf::kScratch, send_base, 0, moved));
    b.Recv(RingPeer(r, n, -d), blocks(Buf::kScratch, recv_base, 0, moved));
    int unpacked = 0;
    for (const Run& run : RunsWithBit(n, d)) {
      b.Copy(blocks(Buf::kScratch, 0, run.first, run.num),
             blocks(Buf::kScratch, recv_base, unpacked, run.num));
      unpacked += run.num;
    }
    if (2 * d < n) pack(2 * d);
  }

  // 3. Unrotate: output block (r - i) <- slot i.
  for (int i = 0; i < n; ++i) {
    b.Copy(blocks(Buf::kOutput, 0, RingPeer(r, n, -i), 1), blocks(Buf::kScratch, 0, i, 1));
  }
  return b.Finish();
}

// Bit d: the slots whose index has bit d set (about half of them) go to r + d.
double EstimateAllToAllBruckUs(const CostQuery& q, const CostModel& c) {
  const int p = q.size();
  double us = 0;
  for (int d = 1; d < p; d <<= 1) {
    us += StepUs(q.topology, RingPartners(p, d), q.bytes() * Moved(p, d), c);
  }
  return us;
}

}  // namespace weft::sched::algo
