// The alpha-beta cost model the planner weighs algorithms with when ranks span several
// hosts. Each algorithm carries its own estimate (Algorithm::estimate_us, defined next
// to its builder in algorithms/), written with the primitives below so that it costs the
// steps its schedule takes; this file holds those primitives, the link figures and the
// entry point that costs a call.
//
// A message of n bytes costs alpha + n / bandwidth. Messages inside a host run in
// parallel at the intra figures (shm); messages leaving (or arriving at) a host share its
// network links (one full-duplex NIC per host unless inter_links says more), so k of them
// at once over one link cost alpha + k·n / bandwidth, over L links alpha + ceil(k/L)·n /
// bandwidth; where a host has at least one link per rank, each rank stripes its messages
// over the L / ranks links it owns (InterLinkLoad). Local copies and reductions are not
// costed. A step of a schedule lasts as long as its slowest message; a pipelined chain
// (the ring and hierarchical broadcasts) costs its first segment's way down the chain
// plus one slowest hop per further segment. Pure functions, no state: safe from any
// thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace weft::sched {

struct Algorithm;  // sched/registry.h

// The link figures. The defaults are round figures for shm on one host and one 10 Gbit/s
// TCP link per host between hosts; WEFT_COST_MODEL overrides any of them:
// "inter_alpha_us=25,inter_gbps=10,inter_links=1,intra_alpha_us=2,intra_gbps=80".
struct CostModel {
  double intra_alpha_us = 2.0;
  double intra_gbps = 80.0;  // Gbit/s
  double inter_alpha_us = 25.0;
  double inter_gbps = 10.0;  // Gbit/s, per link
  double inter_links = 1;    // network links (NICs) per host, a whole number

  // Parses the WEFT_COST_MODEL syntax above (empty: the defaults). Unknown keys,
  // non-positive values and fractional links are InvalidArgument errors. `given`, when
  // not null, receives the keys the text sets (lower case), so that figures detected
  // later fill only the others.
  static Result<CostModel> Parse(const std::string& text,
                                 std::vector<std::string>* given = nullptr);
  // "intra 2 us 80 Gbit/s, inter 25 us 10 Gbit/s" (and " x 4 links" when more than one)
  std::string ToString() const;
  // The WEFT_COST_MODEL text that Parse() reads back as these figures.
  std::string ToSpec() const;
};

// One call as an algorithm's estimate sees it: the ranks' hosts (at least two ranks)
// and the spec's count, root and element size. The count, not only the bytes: the ring
// and hierarchical broadcasts cut segments by elements.
struct CostQuery {
  const Topology& topology;
  size_t count = 0;      // as CollectiveSpec::count: the whole buffer or one rank's block
  size_t elem_size = 1;  // bytes
  int root = 0;          // reduce, broadcast, gather, scatter

  int size() const { return static_cast<int>(topology.host_of.size()); }
  double bytes() const { return double(count) * double(elem_size); }
};

// Estimated time (microseconds) of `algorithm` for `query`: 0 on one rank, < 0 where the
// algorithm has no estimate.
double EstimateUs(const Algorithm& algorithm, const CostQuery& query, const CostModel& costs);

// The same for `spec` (its collective, count and root, on its topology): for
// `algorithm`, or for spec.coll's algorithm named `name`. < 0 where there is no such
// algorithm, where it has no estimate, or where the spec has no topology of spec.size
// ranks.
double EstimateUs(const Algorithm& algorithm, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs);
double EstimateUs(const std::string& name, const CollectiveSpec& spec, size_t elem_size,
                  const CostModel& costs);

// The primitives the algorithms' estimates are written with. A step is a set of
// messages in flight at once; "partner" vectors give each rank's destination in the
// step (-1: it sends nothing), indexed by rank.

// One step in which every message (from, to) of `bytes` is in flight at once, as the
// model above costs it (the host with the most messages leaving or arriving sets the
// inter time), plus one intra latency for each message beyond one send and one receive
// at the busiest rank (the handling of many messages in one step).
double MessagesUs(const Topology& t, const std::vector<std::pair<int, int>>& messages, double bytes,
                  const CostModel& c);

// How many messages' worth of bytes the busiest link of a host carries in such a step,
// when k messages leave it (or arrive at it), at most `busiest_rank` of them at one rank
// of its `ranks`, over `inter_links` links. With fewer links than ranks, ceil(k / links)
// (a host's ranks spread over its links); with at least one link per rank, each rank
// stripes its messages over the links / ranks it owns, so a fraction where it owns several.
double InterLinkLoad(int k, int busiest_rank, int ranks, double inter_links);

// The same for a step in which every rank r with partner[r] >= 0 sends to it.
double StepUs(const Topology& t, const std::vector<int>& partner, double bytes, const CostModel& c);

// The partner vector of p ranks that each send to the rank `distance` after them on a ring
// (distance may be negative).
std::vector<int> RingPartners(int p, int distance);

// One level of a binomial tree rooted at `root` over p ranks: each virtual rank that is a
// multiple of 2·mask and its child vr + mask; the parent sends (broadcast, scatter) or
// the child does (`up`: reduce, gather).
std::vector<int> TreeLevel(int p, int root, int mask, bool up);

// Every rank but the root sends `bytes` to it (up), or the root to every other rank.
double AllWithRootUs(const Topology& t, int root, double bytes, bool up, const CostModel& c);

// A pipelined chain: `segs` segments of `seg_bytes` go down `hops` in order (hop i's
// sends as a partner vector). The first segment pays every hop in turn (the fill); each
// further one arrives one step of all hops at once later (every link busy, the slowest
// setting the pace). Counting every round as the slowest hop, as a lock-step model
// would, charges a chain whose hops are mostly shm as if every hop left the host.
double PipelineUs(const Topology& t, const std::vector<std::vector<int>>& hops, double seg_bytes,
                  size_t segs, const CostModel& c);

// A pipelined schedule (the *_pipelined hierarchical algorithms): `segments` copies of one
// segment's rounds, copy k starting `stagger` rounds after copy k-1. `rounds[j]` is the
// time of the segment's round j and whether its messages leave the host. A round of the
// whole costs the larger of its steps inside hosts, added up, and its steps between
// hosts, added up: a rank's steps of two segments share its links (each rank's one port
// to an NVSwitch, or its memory bandwidth for shm, whichever neighbour they go to).
struct SegmentRound {
  double us = 0;
  bool inter = false;
};
double StaggeredUs(const std::vector<SegmentRound>& rounds, int segments, int stagger);
// The segment count a pipelined algorithm takes: of 1, 2, 4, ..., 32 (none above `most`),
// the one `us_of` finds cheapest; the fewer on a tie.
int CheapestSegments(size_t most, const std::function<double(int)>& us_of);

// Participants that are groups of ranks exchanging side by side: rank_at(q, i) is the
// i-th of participant q's `width` ranks (one rank each for the flat algorithms, a host's
// ranks on its rails for the hierarchical ones).
using RankAt = std::function<int(int participant, int i)>;

// The partner vector of a step in which each of n participants q exchanges with
// partner_of(q) (-1: sits out), rank_at(q, i) with rank_at(partner_of(q), i) for i < width.
std::vector<int> ParticipantPartners(const Topology& t, int n, int width, const RankAt& rank_at,
                                     const std::function<int(int)>& partner_of);

// Recursive doubling and Rabenseifner, as their files build them: the first 2·rem
// participants (rem = n - n2, n2 the largest power of two <= n) fold pairwise, even onto
// odd, and get the result back the same way; the n2 remaining (new index i is
// participant 2i+1 for i < rem, i + rem after) exchange with new index ^ mask. Recursive
// doubling moves the `whole` message for mask = 1, 2, 4, ...; Rabenseifner's (`halving`)
// reduce-scatter halves it for mask = n2/2 .. 1 (the largest half goes the farthest) and
// its allgather retraces it.
double ButterflyUs(const Topology& t, int n, int width, const RankAt& rank_at, double whole,
                   const CostModel& c, bool halving);
// The same, step by step in the order the schedules take them: the fold, the exchanges
// (Rabenseifner's halving steps, then its doubling steps retracing them), the unfold.
std::vector<double> ButterflyStepsUs(const Topology& t, int n, int width, const RankAt& rank_at,
                                     double whole, const CostModel& c, bool halving);
// The flat butterflies: every rank its own participant.
double ButterflyUs(const Topology& t, double whole, const CostModel& c, bool halving);

}  // namespace weft::sched
