// The schedule IR: what one rank does for one collective, as data.
//
// An algorithm is a pure function (CollectiveSpec -> Schedule) with no I/O, clocks or
// threads. The executor runs a schedule over transports; the in-memory interpreter
// (tests/unit/sched/interpreter.h) runs the schedules of all ranks together in the tests; the
// simulator replays them against a network model.
//
// A schedule is a list of rounds. In a round, every kSend and kRecv is in flight at
// the same time (so a ring step's send and receive overlap); when all of them have
// completed, the round's local steps (kReduce, kCopy) run in the order listed. Then
// the next round starts. Messages between a pair of ranks are matched in FIFO order:
// the k-th send from A to B is the k-th receive at B from A, and both must name the
// same number of elements.
//
// Units are elements of the call's dtype. Buffers are named, not pointed to: the
// input (sendbuff), the output (recvbuff) and a scratch area whose size the schedule
// declares. Algorithms must be correct when the call is in place (NCCL convention,
// see InPlaceOffset) unless they set `inplace_safe = false`, in which case the
// executor first copies the input aside.
//
// Schedules for buffers that every rank registered (weftCommRegister, one host) may also
// touch a peer's input and output directly (kPeerReduce, kPeerRead, kPeerWrite: the
// peer's buffers are mapped into this process) and order those accesses with flags
// (kSync). A kSync with a peer is in flight with the round's messages: the round's local
// steps run once every rank named by a kSync of the round has reached its matching kSync
// with this rank (the k-th kSync from A to B matches the k-th from B to A). So all of a
// rank's steps before a kSync happen before all of the peer's steps after the matching
// one: a schedule reads a peer's input only after a kSync with that peer, and leaves the
// peer's buffers alone once its last kSync with it has passed.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::sched {

enum class Collective : uint8_t {
  kAllReduce = 0,
  kReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kBarrier,
};
inline constexpr int kNumCollectives = 9;
const char* CollectiveName(Collective c);  // "allreduce", "reducescatter", ...
// The inverse of CollectiveName; nullopt for any other string.
std::optional<Collective> CollectiveFromName(std::string_view name);

enum class Buf : uint8_t { kInput = 0, kOutput, kScratch };
const char* BufName(Buf b);  // "input", "output", "scratch"


struct Slice {
  Buf buf = Buf::kInput;
  size_t offset = 0;  // elements
  size_t count = 0;   // elements
};

enum class StepKind : uint8_t {
  kSend,    // send `src` to `peer`
  kRecv,    // receive from `peer` into `dst`
  kReduce,  // dst = dst (op) src, elementwise; src and dst have equal counts
  kCopy,    // dst = src
  // Registered buffers only (see the top of this file):
  kSync,        // raise this rank's flag to `peer` and wait for the peer's matching one
  kPeerReduce,  // dst = dst (op) src, src in `peer`'s buffers (input or output)
  kPeerRead,    // dst = src, src in `peer`'s buffers
  kPeerWrite,   // dst = src, dst in `peer`'s buffers (input never)
};

// Whether the step names a slice of a peer's buffers.
inline bool TouchesPeer(StepKind k) {
  return k == StepKind::kPeerReduce || k == StepKind::kPeerRead || k == StepKind::kPeerWrite;
}

struct Step {
  StepKind kind;
  int peer = -1;  // kSend / kRecv / kSync and the kPeer* steps
  Slice src;      // kSend, kReduce, kCopy, kPeer*
  Slice dst;      // kRecv, kReduce, kCopy, kPeer*
};

struct Round {
  std::vector<Step> steps;
};

struct Schedule {
  std::vector<Round> rounds;
  size_t scratch_count = 0;   // elements of scratch the executor must provide
  bool inplace_safe = true;   // false: executor copies the input aside when in place
};

// Which host each rank is on, as the communicator learnt it at init (the mesh's host
// identities). Hosts are numbered 0, 1, ... in the order of their lowest rank. Immutable
// once built; shared by every spec of a communicator.
struct Topology {
  std::vector<int> host_of;  // host index of every rank

  // Ranks with equal strings share a host. ids.size() is the world size.
  static Topology FromHostIds(const std::vector<std::string>& ids);
  // `hosts` hosts with ranks_per_host[h] ranks each, ranks numbered host by host
  // (contiguous placement, as launchers assign them).
  static Topology Contiguous(const std::vector<int>& ranks_per_host);
  int NumHosts() const;
  // The ranks of each host, ascending.
  std::vector<std::vector<int>> Hosts() const;
  // Readable summary: "2 hosts x 2 ranks" or "3 hosts, ranks per host 2,1,3".
  std::string Describe() const;
};

// What the caller asked for, from one rank's point of view. `count` follows NCCL:
//   allreduce, reduce, broadcast: elements in the buffer
//   allgather, gather: elements each rank contributes (output holds size*count)
//   reducescatter, scatter: elements each rank receives (input holds size*count)
//   alltoall: elements sent to each peer (input and output hold size*count)
//   barrier: ignored (0)
struct CollectiveSpec {
  Collective coll = Collective::kAllReduce;
  int rank = 0;
  int size = 1;
  int root = 0;        // reduce, broadcast, gather, scatter
  size_t count = 0;
  // Where the ranks are (null: unknown). Only topology-aware algorithms read it; a
  // schedule stays a pure function of the spec.
  std::shared_ptr<const Topology> topology = nullptr;
  // Every rank's input and output are registered, every rank shares this host and has
  // mapped every other's (comm/registered_path.h): schedules may use the kPeer* steps.
  // Algorithms that need it support only such specs.
  bool registered = false;
  // With `registered`: false when the agreement found every rank's call out of place.
  // All-to-all's single pass needs that: in place, a rank would overwrite blocks of its
  // input that its peers are still reading.
  bool may_be_in_place = true;
  // The pipelined algorithms (hierarchical_pipelined, ...) cut the call into this many
  // segments and overlap one segment's phases with another's; the planner sets it from
  // the algorithm's cost estimate (Algorithm::segments). 0 or 1: one segment. The other
  // algorithms ignore it.
  int segments = 0;
};

// Elements in the input and output buffers for `spec` (on this rank; for rooted
// collectives non-roots may pass smaller buffers: reduce's output and gather's output
// matter only at the root, scatter's input only at the root).
size_t InputCount(const CollectiveSpec& spec);
size_t OutputCount(const CollectiveSpec& spec);
// In-place calls (NCCL convention) have sendbuff == recvbuff + InPlaceOffset elements:
// allgather/gather: rank*count (input is this rank's block of the output);
// reducescatter/scatter: the output is block `rank` of the input, expressed as a
// negative offset: sendbuff == recvbuff - rank*count; everything else: 0.
long long InPlaceOffset(const CollectiveSpec& spec);

// The share of `count` elements owned by chunk `i` of `n`: the first count % n chunks
// get one extra element. Offsets are prefix sums of sizes.
inline size_t ChunkSize(size_t count, int n, int i) {
  return count / n + (static_cast<size_t>(i) < count % n ? 1 : 0);
}
inline size_t ChunkOffset(size_t count, int n, int i) {
  return static_cast<size_t>(i) * (count / n) +
         std::min<size_t>(static_cast<size_t>(i), count % n);
}

// Human-readable dump, one step per line (for WEFT_DEBUG=TRACE and test failures).
std::string ToString(const Schedule& schedule);
// One step, as in the dump: "send to 3 input[0+5]", "reduce output[5+5] <- scratch[0+5]".
std::string ToString(const Step& step);

}  // namespace weft::sched
