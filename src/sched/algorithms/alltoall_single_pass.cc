// Single-pass all-to-all on registered buffers (single_pass.h): rank r reads block r of
// every peer's input straight into block p of its output, and copies its own block r.
//
// Nobody writes a peer's buffers, and block r of each input is read by rank r alone. In
// place it would not hold: rank r's output block p is its input block p, which rank p is
// reading. So the algorithm runs only when the agreement found every rank's call out of
// place (CollectiveSpec::may_be_in_place false); an in-place all-to-all takes the plain
// path.
#include "sched/algorithms/algorithms.h"
#include "sched/algorithms/builder.h"
#include "sched/algorithms/single_pass.h"

namespace weft::sched::algo {

bool SupportsRegisteredOutOfPlace(const CollectiveSpec& spec) {
  return spec.registered && !spec.may_be_in_place;
}

Schedule BuildAllToAllSinglePass(const CollectiveSpec& spec) {
  const int n = spec.size;
  const int r = spec.rank;
  const size_t c = spec.count;
  auto block = [c](int i) { return static_cast<size_t>(i) * c; };
  return SinglePassSchedule(spec, Out(0, c), In(0, c), [&](Builder& b) {
    b.Copy(Out(block(r), c), In(block(r), c));
    // Starting at the next rank, so that the ranks do not all read rank 0 first.
    for (int k = 1; k < n; ++k) {
      const int p = RingPeer(r, n, k);
      b.PeerRead(Out(block(p), c), p, In(block(r), c));
    }
  });
}

// Each rank reads its block of every input and writes it once.
double EstimateAllToAllSinglePassUs(const CostQuery& q, const CostModel& c) {
  return SinglePassUs(c, 2.0 * q.size() * q.bytes());
}

}  // namespace weft::sched::algo
