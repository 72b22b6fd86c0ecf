#include "interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <string>

namespace weft::sched {
namespace {

constexpr std::byte kFill{0xA5};

// Where a rank's buffers live, in elements. The input and the output share one arena
// so that in-place aliasing is real: overlapping slices are overlapping bytes.
struct Layout {
  size_t in_count = 0;
  size_t out_count = 0;
  size_t scratch_count = 0;
  size_t in_base = 0;
  size_t out_base = 0;
  size_t arena_count = 0;
  bool aliased = false;  // input aliases output (in place and inplace_safe)
};

Layout MakeLayout(const CollectiveSpec& spec, const Schedule& schedule, bool in_place) {
  Layout l;
  l.in_count = InputCount(spec);
  l.out_count = OutputCount(spec);
  l.scratch_count = schedule.scratch_count;
  l.aliased = in_place && schedule.inplace_safe;
  if (in_place) {
    // The caller's buffer: the output, with the input at InPlaceOffset inside it (or the
    // output inside the input, for a negative offset).
    const long long d = InPlaceOffset(spec);
    l.out_base = d < 0 ? static_cast<size_t>(-d) : 0;
    l.in_base = static_cast<size_t>(static_cast<long long>(l.out_base) + d);
    if (!l.aliased) {
      // The executor copies the input aside: the schedule's input is that copy, placed
      // after the caller's buffer.
      l.in_base = std::max(l.in_base + l.in_count, l.out_base + l.out_count);
    }
  } else {
    l.in_base = 0;
    l.out_base = l.in_count;
  }
  l.arena_count = std::max(l.in_base + l.in_count, l.out_base + l.out_count);
  return l;
}

// The caller's buffer in `layout` when in place and not aliased: where the input sits
// inside it before the copy aside (for initialising it like a real in-place call).
size_t CallerInputBase(const CollectiveSpec& spec, const Layout& l) {
  return static_cast<size_t>(static_cast<long long>(l.out_base) + InPlaceOffset(spec));
}

enum Space { kArena = 0, kScratchSpace = 1 };

struct Region {
  int space = kArena;
  size_t begin = 0;  // elements
  size_t end = 0;
};

bool Overlap(const Region& a, const Region& b) {
  return a.space == b.space && a.begin < b.end && b.begin < a.end;
}
bool Same(const Region& a, const Region& b) {
  return a.space == b.space && a.begin == b.begin && a.end == b.end;
}

Status Resolve(const Layout& l, const Slice& s, Region* out) {
  size_t limit = 0, base = 0;
  int space = kArena;
  switch (s.buf) {
    case Buf::kInput:
      limit = l.in_count;
      base = l.in_base;
      break;
    case Buf::kOutput:
      limit = l.out_count;
      base = l.out_base;
      break;
    case Buf::kScratch:
      limit = l.scratch_count;
      space = kScratchSpace;
      break;
    default:
      return Internal(fmt::format("bad buffer id {}", static_cast<int>(s.buf)));
  }
  if (s.offset > limit || s.count > limit - s.offset) {
    return Internal(fmt::format("slice {}[{}+{}] is out of bounds: the {} holds {} elements",
                                BufName(s.buf), s.offset, s.count, BufName(s.buf), limit));
  }
  *out = Region{space, base + s.offset, base + s.offset + s.count};
  return Status::Ok();
}

std::string Where(int rank, size_t round, size_t step, const Step& s) {
  return fmt::format("rank {} round {} step {} ({})", rank, round, step, ToString(s));
}

Status CheckPeer(const CollectiveSpec& spec, const Step& s) {
  if (s.peer < 0 || s.peer >= spec.size) {
    return Internal(fmt::format("peer {} is not in a world of {} ranks", s.peer, spec.size));
  }
  if (s.peer == spec.rank) return Internal("a rank sends to or receives from itself (use kCopy)");
  return Status::Ok();
}

Status CheckWritable(const Slice& dst) {
  if (dst.buf == Buf::kInput) return Internal("writes into the input buffer");
  return Status::Ok();
}

// A slice of a peer's buffers (registered schedules): its input or output, never its
// scratch, which is private; the bounds are checked against the peer's layout when the
// step runs.
Status CheckPeerSlice(const CollectiveSpec& spec, const Slice& peer_slice, bool write) {
  if (!spec.registered) return Internal("a step on a peer's buffers needs registered buffers");
  if (peer_slice.buf == Buf::kScratch) return Internal("a peer's scratch is not shared");
  if (write && peer_slice.buf == Buf::kInput) return Internal("writes into a peer's input buffer");
  return Status::Ok();
}

// Static checks of one step; fills the resolved regions (src, dst) it uses (for a step on a
// peer's buffers, only the local one).
Status CheckStep(const CollectiveSpec& spec, const Layout& l, const Step& s, Region* src,
                 Region* dst) {
  switch (s.kind) {
    case StepKind::kSync:
      if (!spec.registered) return Internal("a sync needs registered buffers");
      return CheckPeer(spec, s);
    case StepKind::kPeerReduce:
    case StepKind::kPeerRead:
    case StepKind::kPeerWrite: {
      WEFT_RETURN_IF_ERROR(CheckPeer(spec, s));
      if (s.src.count != s.dst.count) {
        return Internal(
            fmt::format("source has {} elements but destination has {}", s.src.count, s.dst.count));
      }
      if (s.kind == StepKind::kPeerWrite) {
        WEFT_RETURN_IF_ERROR(CheckPeerSlice(spec, s.dst, true));
        return Resolve(l, s.src, src);
      }
      WEFT_RETURN_IF_ERROR(CheckPeerSlice(spec, s.src, false));
      WEFT_RETURN_IF_ERROR(CheckWritable(s.dst));
      return Resolve(l, s.dst, dst);
    }
    case StepKind::kSend:
      WEFT_RETURN_IF_ERROR(CheckPeer(spec, s));
      return Resolve(l, s.src, src);
    case StepKind::kRecv:
      WEFT_RETURN_IF_ERROR(CheckPeer(spec, s));
      WEFT_RETURN_IF_ERROR(CheckWritable(s.dst));
      return Resolve(l, s.dst, dst);
    case StepKind::kReduce:
    case StepKind::kCopy: {
      if (s.src.count != s.dst.count) {
        return Internal(
            fmt::format("source has {} elements but destination has {}", s.src.count, s.dst.count));
      }
      WEFT_RETURN_IF_ERROR(CheckWritable(s.dst));
      WEFT_RETURN_IF_ERROR(Resolve(l, s.src, src));
      WEFT_RETURN_IF_ERROR(Resolve(l, s.dst, dst));
      if (s.kind == StepKind::kReduce && Overlap(*src, *dst)) {
        return Internal("reduce source overlaps its destination");
      }
      if (s.kind == StepKind::kCopy && Overlap(*src, *dst) && !Same(*src, *dst)) {
        return Internal("copy source partly overlaps its destination");
      }
      return Status::Ok();
    }
  }
  return Internal(fmt::format("unknown step kind {}", static_cast<int>(s.kind)));
}

Status ValidateWithLayout(const CollectiveSpec& spec, const Schedule& schedule, const Layout& l) {
  for (size_t ri = 0; ri < schedule.rounds.size(); ++ri) {
    const std::vector<Step>& steps = schedule.rounds[ri].steps;
    std::vector<Region> src(steps.size()), dst(steps.size());
    for (size_t si = 0; si < steps.size(); ++si) {
      Status st = CheckStep(spec, l, steps[si], &src[si], &dst[si]);
      if (!st.ok()) return st.WithContext(Where(spec.rank, ri, si, steps[si]));
    }
    // Races inside the round: a receive's region against every other message's region.
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind != StepKind::kRecv) continue;
      for (size_t j = 0; j < steps.size(); ++j) {
        if (j == i) continue;
        const bool send = steps[j].kind == StepKind::kSend;
        const bool recv = steps[j].kind == StepKind::kRecv;
        if (!send && !recv) continue;
        if (recv && j < i) continue;  // each pair of receives once
        const Region& other = send ? src[j] : dst[j];
        if (Overlap(dst[i], other)) {
          return Internal(fmt::format(
              "{}: data race: the receive writes elements that '{}' (step {}) {} in the same "
              "round{}",
              Where(spec.rank, ri, i, steps[i]), ToString(steps[j]), j,
              send ? "sends" : "also receives into", l.aliased ? " (input aliases output)" : ""));
        }
      }
    }
  }
  return Status::Ok();
}

// Vector clocks order the accesses of registered schedules to one another's buffers: a
// rank's clock ticks at each of its events and takes in the sender's (or the synced
// peer's) clock as of its post. Event e of rank a happens before event f iff
// e.clock[a] <= f.clock[a].
using Clock = std::vector<uint64_t>;

void Merge(Clock& into, const Clock& other) {
  for (size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

struct Message {
  std::vector<std::byte> data;
  size_t count = 0;
  size_t round = 0;
  size_t step = 0;
  Clock clock;  // the sender's at the post
};

// One access to a rank's input or output (registered schedules only).
struct Access {
  int owner = 0;  // whose buffer
  int actor = 0;  // who touched it
  Region region;
  bool write = false;
  Clock clock;  // the actor's, at the access
  size_t round = 0, step = 0;
};

struct RankState {
  CollectiveSpec spec;
  const Schedule* schedule = nullptr;
  Layout layout;
  std::vector<std::byte> arena;
  std::vector<std::byte> scratch;
  size_t round = 0;         // current round; == rounds.size() when done
  std::vector<size_t> seq;  // per step of the current round: FIFO index with its peer
  Clock clock;

  bool done() const { return round >= schedule->rounds.size(); }
  std::byte* Ptr(const Region& r, size_t elem) {
    std::vector<std::byte>& v = r.space == kArena ? arena : scratch;
    return v.data() + r.begin * elem;
  }
};

class Machine {
 public:
  Machine(const CollectiveSpec& spec, size_t elem, const ReduceFn& reduce, bool rendezvous)
      : n_(spec.size),
        elem_(elem),
        reduce_(reduce),
        rendezvous_(rendezvous),
        queues_(static_cast<size_t>(n_) * n_),
        sends_posted_(queues_.size(), 0),
        recvs_posted_(queues_.size(), 0),
        sync_clocks_(queues_.size()) {}

  std::vector<RankState>& ranks() { return ranks_; }

  Status Run() {
    for (RankState& s : ranks_) {
      for (const Round& round : s.schedule->rounds)
        for (const Step& step : round.steps) track_ = track_ || TouchesPeer(step.kind);
    }
    for (int r = 0; r < n_; ++r) {
      ranks_[r].clock.assign(n_, 0);
      ranks_[r].clock[r] = 1;  // entering the call
    }
    for (int r = 0; r < n_; ++r) Post(r);
    bool progress = true;
    while (progress) {
      progress = false;
      for (int r = 0; r < n_; ++r) {
        while (!ranks_[r].done() && CanComplete(r)) {
          WEFT_RETURN_IF_ERROR(Complete(r));
          ++ranks_[r].round;
          Post(r);
          progress = true;
        }
      }
    }
    bool all_done = true;
    for (const RankState& s : ranks_) all_done = all_done && s.done();
    if (!all_done) return Internal(DeadlockReport());
    WEFT_RETURN_IF_ERROR(CheckLeftovers());
    return CheckAccesses();
  }

 private:
  size_t Pair(int from, int to) const { return static_cast<size_t>(from) * n_ + to; }

  // Posts the current round of rank r: sends capture their data now.
  void Post(int r) {
    RankState& s = ranks_[r];
    if (s.done()) return;
    const std::vector<Step>& steps = s.schedule->rounds[s.round].steps;
    s.seq.assign(steps.size(), 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kSend) {
        Region src;
        (void)Resolve(s.layout, step.src, &src);  // validated already
        Message m;
        m.count = step.src.count;
        m.round = s.round;
        m.step = i;
        const std::byte* p = s.Ptr(src, elem_);
        m.data.assign(p, p + m.count * elem_);
        Log(r, r, src, false, i);
        m.clock = s.clock;
        s.seq[i] = sends_posted_[Pair(r, step.peer)]++;
        queues_[Pair(r, step.peer)].push_back(std::move(m));
      } else if (step.kind == StepKind::kRecv) {
        s.seq[i] = recvs_posted_[Pair(step.peer, r)]++;
      } else if (step.kind == StepKind::kSync) {
        s.seq[i] = sync_clocks_[Pair(r, step.peer)].size();
        sync_clocks_[Pair(r, step.peer)].push_back(s.clock);
      }
    }
  }

  bool CanComplete(int r) const {
    const RankState& s = ranks_[r];
    const std::vector<Step>& steps = s.schedule->rounds[s.round].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kRecv && sends_posted_[Pair(step.peer, r)] <= s.seq[i]) {
        return false;
      }
      if (step.kind == StepKind::kSync && sync_clocks_[Pair(step.peer, r)].size() <= s.seq[i]) {
        return false;
      }
      if (rendezvous_ && step.kind == StepKind::kSend &&
          recvs_posted_[Pair(r, step.peer)] <= s.seq[i]) {
        return false;
      }
    }
    return true;
  }

  Status Complete(int r) {
    RankState& s = ranks_[r];
    const std::vector<Step>& steps = s.schedule->rounds[s.round].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.kind == StepKind::kSync) Merge(s.clock, sync_clocks_[Pair(step.peer, r)][s.seq[i]]);
      if (step.kind != StepKind::kRecv) continue;
      std::deque<Message>& q = queues_[Pair(step.peer, r)];
      Message m = std::move(q.front());
      q.pop_front();
      Merge(s.clock, m.clock);
      if (m.count != step.dst.count) {
        return Internal(fmt::format(
            "{}: message size mismatch: rank {} sent {} elements (its round {} step {}) but "
            "this receive expects {}",
            Where(r, s.round, i, step), step.peer, m.count, m.round, m.step, step.dst.count));
      }
      Region dst;
      (void)Resolve(s.layout, step.dst, &dst);
      if (!m.data.empty()) std::memcpy(s.Ptr(dst, elem_), m.data.data(), m.data.size());
      Log(r, r, dst, true, i);
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (TouchesPeer(step.kind)) {
        Status st = RunPeerStep(r, step, i);
        if (!st.ok()) return st.WithContext(Where(r, s.round, i, step));
        continue;
      }
      if (step.kind != StepKind::kReduce && step.kind != StepKind::kCopy) continue;
      Region src, dst;
      (void)Resolve(s.layout, step.src, &src);
      (void)Resolve(s.layout, step.dst, &dst);
      // A copy onto itself (an in-place call's input is its output) touches nothing: the
      // executor skips it too, so a peer may read those elements meanwhile.
      if (step.kind == StepKind::kCopy && Same(src, dst)) continue;
      Log(r, r, src, false, i);
      Log(r, r, dst, true, i);
      if (step.kind == StepKind::kCopy) {
        std::memcpy(s.Ptr(dst, elem_), s.Ptr(src, elem_), step.src.count * elem_);
      } else if (step.src.count > 0) {
        reduce_(s.Ptr(dst, elem_), s.Ptr(src, elem_), step.src.count);
      }
    }
    return Status::Ok();
  }

  // A kPeer* step of rank r: the peer's slice resolved in the peer's layout.
  Status RunPeerStep(int r, const Step& step, size_t i) {
    RankState& s = ranks_[r];
    RankState& peer = ranks_[step.peer];
    const bool write = step.kind == StepKind::kPeerWrite;
    const Slice& local_slice = write ? step.src : step.dst;
    const Slice& peer_slice = write ? step.dst : step.src;
    Region local, remote;
    (void)Resolve(s.layout, local_slice, &local);  // validated already
    Status st = Resolve(peer.layout, peer_slice, &remote);
    if (!st.ok()) return st.WithContext(fmt::format("in rank {}'s buffers", step.peer));
    Log(r, r, local, !write, i);
    Log(step.peer, r, remote, write, i);
    if (step.dst.count == 0) return Status::Ok();
    std::byte* lp = s.Ptr(local, elem_);
    std::byte* rp = peer.Ptr(remote, elem_);
    const size_t bytes = step.dst.count * elem_;
    if (step.kind == StepKind::kPeerWrite) {
      std::memmove(rp, lp, bytes);
    } else if (step.kind == StepKind::kPeerRead) {
      std::memmove(lp, rp, bytes);
    } else {
      reduce_(lp, rp, step.dst.count);
    }
    return Status::Ok();
  }

  // Registered schedules: records that `actor` touched `region` of `owner`'s arena.
  void Log(int owner, int actor, const Region& region, bool write, size_t step) {
    if (!track_ || region.space != kArena || region.begin == region.end) return;
    RankState& a = ranks_[actor];
    ++a.clock[actor];
    if (accesses_.empty()) accesses_.resize(n_);
    accesses_[owner].push_back({owner, actor, region, write, a.clock, a.round, step});
  }

  // Every access to another rank's buffers must happen after that rank entered the call
  // and before it left it, and be ordered (a sync or a message apart) with every other
  // rank's access to the same elements where either writes.
  Status CheckAccesses() const {
    auto before = [](const Access& e, const Access& f) {
      return e.clock[e.actor] <= f.clock[e.actor];
    };
    auto what = [](const Access& x) {
      return fmt::format("rank {} round {} step {} {} rank {}'s elements [{}, {})", x.actor,
                         x.round, x.step, x.write ? "writes" : "reads", x.owner, x.region.begin,
                         x.region.end);
    };
    for (const std::vector<Access>& of_owner : accesses_) {
      for (const Access& x : of_owner) {
        if (x.actor == x.owner) continue;
        if (x.clock[x.owner] < 1) return Internal(what(x) + " before that rank entered the call");
        if (ranks_[x.owner].clock[x.actor] < x.clock[x.actor])
          return Internal(what(x) + " after that rank may have returned (no sync after it)");
        for (const Access& y : of_owner) {
          if (y.actor == x.actor || !(x.write || y.write)) continue;
          if (!Overlap(x.region, y.region) || before(x, y) || before(y, x)) continue;
          return Internal(fmt::format(
              "{}: data race with rank {} round {} step {}, which {} them unordered", what(x),
              y.actor, y.round, y.step, y.write ? "writes" : "reads"));
        }
      }
    }
    return Status::Ok();
  }

  std::string DeadlockReport() const {
    std::string out = "deadlock: no rank can progress;";
    int listed = 0;
    for (int r = 0; r < n_ && listed < 8; ++r) {
      const RankState& s = ranks_[r];
      if (s.done()) continue;
      const std::vector<Step>& steps = s.schedule->rounds[s.round].steps;
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& step = steps[i];
        if (step.kind == StepKind::kRecv && sends_posted_[Pair(step.peer, r)] <= s.seq[i]) {
          out +=
              fmt::format(" rank {} round {} waits for message #{} from rank {} ({} sent so far);",
                          r, s.round, s.seq[i], step.peer, sends_posted_[Pair(step.peer, r)]);
          ++listed;
          break;
        }
        if (step.kind == StepKind::kSync && sync_clocks_[Pair(step.peer, r)].size() <= s.seq[i]) {
          out += fmt::format(" rank {} round {} waits for sync #{} from rank {};", r, s.round,
                             s.seq[i], step.peer);
          ++listed;
          break;
        }
        if (rendezvous_ && step.kind == StepKind::kSend &&
            recvs_posted_[Pair(r, step.peer)] <= s.seq[i]) {
          out += fmt::format(
              " rank {} round {} waits for rank {} to receive its message #{} ({} receives "
              "posted so far);",
              r, s.round, step.peer, s.seq[i], recvs_posted_[Pair(r, step.peer)]);
          ++listed;
          break;
        }
      }
    }
    int stuck = 0;
    for (const RankState& s : ranks_) stuck += s.done() ? 0 : 1;
    if (stuck > listed) out += fmt::format(" ... {} ranks stuck in all", stuck);
    return out;
  }

  Status CheckLeftovers() const {
    for (int from = 0; from < n_; ++from) {
      for (int to = 0; to < n_; ++to) {
        const std::deque<Message>& q = queues_[Pair(from, to)];
        if (q.empty()) continue;
        return Internal(fmt::format(
            "unmatched message: rank {} sent {} message(s) to rank {} that were never received "
            "(first: {} elements from its round {} step {})",
            from, q.size(), to, q.front().count, q.front().round, q.front().step));
      }
    }
    return Status::Ok();
  }

  int n_;
  size_t elem_;
  const ReduceFn& reduce_;
  bool rendezvous_;
  std::vector<RankState> ranks_;
  std::vector<std::deque<Message>> queues_;  // [from * n + to]
  std::vector<size_t> sends_posted_;         // [from * n + to]
  std::vector<size_t> recvs_posted_;         // [from * n + to], posted by `to`
  // Registered schedules: each kSync's clock as posted, [from * n + to] in FIFO order, and
  // the accesses to the ranks' buffers (recorded only when some step touches a peer's).
  std::vector<std::vector<Clock>> sync_clocks_;
  bool track_ = false;
  std::vector<std::vector<Access>> accesses_;  // by owner
};

}  // namespace

std::vector<Schedule> BuildAllRanks(Schedule (*build)(const CollectiveSpec&),
                                    const CollectiveSpec& spec) {
  std::vector<Schedule> schedules;
  schedules.reserve(spec.size);
  for (int r = 0; r < spec.size; ++r) {
    CollectiveSpec s = spec;
    s.rank = r;
    schedules.push_back(build(s));
  }
  return schedules;
}

Result<std::vector<std::vector<std::byte>>> Interpret(
    const CollectiveSpec& spec, const std::vector<Schedule>& schedules,
    const std::vector<std::vector<std::byte>>& inputs, size_t elem_size, const ReduceFn& reduce,
    const InterpretOptions& options) {
  if (spec.size < 1 || spec.root < 0 || spec.root >= spec.size) {
    return InvalidArgument(fmt::format("bad world: size {}, root {}", spec.size, spec.root));
  }
  if (schedules.size() != static_cast<size_t>(spec.size) ||
      inputs.size() != static_cast<size_t>(spec.size)) {
    return InvalidArgument(fmt::format("{} ranks but {} schedules and {} inputs", spec.size,
                                       schedules.size(), inputs.size()));
  }
  if (elem_size == 0) return InvalidArgument("element size 0");
  Machine machine(spec, elem_size, reduce, options.rendezvous);
  std::vector<RankState>& ranks = machine.ranks();
  ranks.resize(spec.size);
  for (int r = 0; r < spec.size; ++r) {
    RankState& s = ranks[r];
    s.spec = spec;
    s.spec.rank = r;
    s.schedule = &schedules[r];
    s.layout = MakeLayout(s.spec, schedules[r], options.in_place);
    const Layout& l = s.layout;
    if (inputs[r].size() != l.in_count * elem_size) {
      return InvalidArgument(fmt::format("rank {}: input has {} bytes, expected {} elements of {}",
                                         r, inputs[r].size(), l.in_count, elem_size));
    }
    WEFT_RETURN_IF_ERROR(ValidateWithLayout(s.spec, schedules[r], l));
    s.arena.assign(l.arena_count * elem_size, kFill);
    s.scratch.assign(l.scratch_count * elem_size, kFill);
    if (!inputs[r].empty()) {
      std::memcpy(s.arena.data() + l.in_base * elem_size, inputs[r].data(), inputs[r].size());
      if (options.in_place && !l.aliased) {
        // A real in-place call also has the input inside the caller's buffer.
        std::memcpy(s.arena.data() + CallerInputBase(s.spec, l) * elem_size, inputs[r].data(),
                    inputs[r].size());
      }
    }
  }
  WEFT_RETURN_IF_ERROR(machine.Run());
  std::vector<std::vector<std::byte>> outputs(spec.size);
  for (int r = 0; r < spec.size; ++r) {
    const RankState& s = ranks[r];
    const std::byte* p = s.arena.data() + s.layout.out_base * elem_size;
    outputs[r].assign(p, p + s.layout.out_count * elem_size);
  }
  return outputs;
}

}  // namespace weft::sched
