// The event loop behind RunEngine (see engine.h).
#include "sim/engine.h"

#include <fmt/format.h>

#include <deque>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

#include "sim/fluid.h"

namespace weft::sim {
namespace {

using sched::Step;
using sched::StepKind;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRelTie = 1e-12;  // as in fluid.cc: events this close are one batch

struct RankState {
  size_t round = 0;
  int pending = 0;  // messages of the current round not yet complete
  bool done = false;
  double finish = 0;
};

struct PostedSend {
  size_t count;
  size_t round;
};
struct PostedRecv {
  int rep;  // the receiving representative
  size_t count;
  size_t round;
};
// Messages of one pair orbit, keyed by (sender representative, receiver as seen from it).
struct PairQueue {
  std::deque<PostedSend> sends;
  std::deque<PostedRecv> recvs;
};

struct Message {
  int src_rep = 0;
  int dst = 0;  // receiver in the sender's frame (a real rank)
  int dst_rep = 0;
  double bytes = 0;
};

enum class EventKind : uint8_t { kLatencyDone, kLocalDone, kPost };
struct Event {
  double t;
  uint64_t seq;  // FIFO among equal times, so runs are deterministic
  EventKind kind;
  int id;             // message id or representative
  uint32_t step = 0;  // kPost: the step of the representative's current round to post
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Engine {
 public:
  explicit Engine(const EngineInput& in)
      : c_(*in.cluster),
        sym_(*in.symmetry),
        scheds_(*in.schedules),
        elem_(in.elem_size),
        ranks_(sym_.reps()) {}

  Result<EngineResult> Run() {
    for (int r = 0; r < sym_.reps(); ++r) WEFT_RETURN_IF_ERROR(StartRound(r, 0.0));
    std::vector<uint64_t> completed;
    while (true) {
      const double tq = events_.empty() ? kInf : events_.top().t;
      const double tf = net_.NextCompletion();
      const double t = std::min(tq, tf);
      if (t == kInf) break;
      ++result_.batches;
      completed.clear();
      net_.AdvanceTo(t, &completed);
      for (uint64_t id : completed) WEFT_RETURN_IF_ERROR(Complete(static_cast<int>(id), t));
      const double horizon = t + kRelTie * t;
      while (!events_.empty() && events_.top().t <= horizon) {
        const Event e = events_.top();
        events_.pop();
        switch (e.kind) {
          case EventKind::kLatencyDone:
            WEFT_RETURN_IF_ERROR(LatencyDone(e.id, t));
            break;
          case EventKind::kLocalDone:
            WEFT_RETURN_IF_ERROR(NextRound(e.id, t));
            break;
          case EventKind::kPost:
            WEFT_RETURN_IF_ERROR(PostStep(e.id, e.step, t));
            break;
        }
      }
    }
    return Finish();
  }

 private:
  void Push(double t, EventKind kind, int id, uint32_t step = 0) {
    events_.push({t, seq_++, kind, id, step});
  }

  Result<EngineResult> Finish() {
    result_.first_done = kInf;
    for (int r = 0; r < sym_.reps(); ++r) {
      const RankState& s = ranks_[r];
      if (!s.done) {
        return Internal(fmt::format(
            "simulated collective deadlocked: rank {} is stuck in round {} of {} waiting for "
            "{} message(s)",
            r, s.round, scheds_[r].rounds.size(), s.pending));
      }
      result_.seconds = std::max(result_.seconds, s.finish);
      result_.first_done = std::min(result_.first_done, s.finish);
    }
    for (const auto& [key, q] : queues_) {
      if (!q.sends.empty() || !q.recvs.empty()) {
        return Internal(
            fmt::format("simulated collective left messages unmatched "
                        "(pair {} -> {})",
                        key / sym_.size(), key % sym_.size()));
      }
    }
    return result_;
  }

  // Runs rounds from the current one until one has messages in flight, a local-step
  // delay, or the schedule ends.
  Status StartRound(int rep, double t) {
    RankState& s = ranks_[rep];
    const auto& rounds = scheds_[rep].rounds;
    while (s.round < rounds.size()) {
      WEFT_RETURN_IF_ERROR(PostRound(rep, t));
      if (s.pending > 0) return Status::Ok();
      const double local = LocalSeconds(rep);
      if (local > 0) {
        Push(t + local, EventKind::kLocalDone, rep);
        return Status::Ok();
      }
      ++s.round;
    }
    s.done = true;
    s.finish = t;
    return Status::Ok();
  }

  // Posts the current round's messages (engine.h): the first send and the first receive
  // now, the k-th message after them k·o later, in the round's order. Every message is
  // counted pending now, so the round cannot end before its delayed posts are made.
  Status PostRound(int rep, double t) {
    RankState& s = ranks_[rep];
    const std::vector<Step>& steps = scheds_[rep].rounds[s.round].steps;
    const double o = c_.message_overhead_s();
    bool sent = false, received = false;
    int extra = 0;
    for (uint32_t i = 0; i < steps.size(); ++i) {
      const StepKind kind = steps[i].kind;
      if (kind != StepKind::kSend && kind != StepKind::kRecv) continue;
      ++s.pending;
      const bool first = !std::exchange(kind == StepKind::kSend ? sent : received, true);
      if (first || o <= 0) {
        WEFT_RETURN_IF_ERROR(PostStep(rep, i, t));
      } else {
        Push(t + ++extra * o, EventKind::kPost, rep, i);
      }
    }
    return Status::Ok();
  }

  // Posts step `i` of `rep`'s current round, a send or a receive.
  Status PostStep(int rep, uint32_t i, double t) {
    const size_t round = ranks_[rep].round;
    const Step& step = scheds_[rep].rounds[round].steps[i];
    if (step.kind == StepKind::kSend) return PostSend(rep, step.peer, step.src.count, round, t);
    return PostRecv(rep, step.peer, step.dst.count, round, t);
  }

  double LocalSeconds(int rep) const {
    double seconds = 0;
    for (const Step& step : scheds_[rep].rounds[ranks_[rep].round].steps) {
      const double bytes = static_cast<double>(step.dst.count) * elem_;
      // A registered-buffer schedule's steps on a peer's memory cost as local ones: on one
      // host both are bound by memory bandwidth (its kSync flags are not modelled).
      if (step.kind == StepKind::kReduce || step.kind == StepKind::kPeerReduce)
        seconds += bytes * c_.reduce_s_per_byte;
      if (step.kind == StepKind::kCopy || step.kind == StepKind::kPeerRead ||
          step.kind == StepKind::kPeerWrite)
        seconds += bytes * c_.copy_s_per_byte;
    }
    return seconds;
  }

  Status NextRound(int rep, double t) {
    ++ranks_[rep].round;
    return StartRound(rep, t);
  }

  uint64_t Key(int src_rep, int dst) const {
    return static_cast<uint64_t>(src_rep) * static_cast<uint64_t>(sym_.size()) +
           static_cast<uint64_t>(dst);
  }

  Status CheckPeer(int rep, int peer) const {
    if (peer < 0 || peer >= sym_.size() || peer == rep) {
      return Internal(fmt::format("rank {} round {}: bad peer {} in a world of {}", rep,
                                  ranks_[rep].round, peer, sym_.size()));
    }
    return Status::Ok();
  }

  Status PostSend(int rep, int peer, size_t count, size_t round, double t) {
    WEFT_RETURN_IF_ERROR(CheckPeer(rep, peer));
    PairQueue& q = queues_[Key(rep, peer)];
    if (q.recvs.empty()) {
      q.sends.push_back({count, round});
      return Status::Ok();
    }
    const PostedRecv recv = q.recvs.front();
    q.recvs.pop_front();
    return Match(rep, peer, recv.rep, count, recv.count, round, recv.round, t);
  }

  Status PostRecv(int rep, int peer, size_t count, size_t round, double t) {
    WEFT_RETURN_IF_ERROR(CheckPeer(rep, peer));
    // The orbit of the pair (peer -> rep) is named from its sender's representative.
    const int g = sym_.ElementOf(peer);
    const int src_rep = sym_.Rep(peer);
    const int dst = sym_.Unapply(g, rep);
    PairQueue& q = queues_[Key(src_rep, dst)];
    if (q.sends.empty()) {
      q.recvs.push_back({rep, count, round});
      return Status::Ok();
    }
    const PostedSend send = q.sends.front();
    q.sends.pop_front();
    return Match(src_rep, dst, rep, send.count, count, send.round, round, t);
  }

  Status Match(int src_rep, int dst, int dst_rep, size_t send_count, size_t recv_count,
               size_t send_round, size_t recv_round, double t) {
    if (send_count != recv_count) {
      return Internal(fmt::format(
          "rank {} round {} sends {} elements to rank {}, whose matching receive (rank {} "
          "round {}, up to symmetry) expects {}",
          src_rep, send_round, send_count, dst, dst_rep, recv_round, recv_count));
    }
    int id;
    if (free_.empty()) {
      id = static_cast<int>(messages_.size());
      messages_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    messages_[id] = {src_rep, dst, dst_rep, static_cast<double>(send_count) * elem_};
    ++result_.messages;
    Push(t + RouteOf(c_, src_rep, dst).alpha_s, EventKind::kLatencyDone, id);
    return Status::Ok();
  }

  Status LatencyDone(int id, double t) {
    const Message& m = messages_[id];
    if (m.bytes <= 0) return Complete(id, t);
    const Route route = RouteOf(c_, m.src_rep, m.dst);
    int res[kMaxHops];
    for (int i = 0; i < route.num_hops; ++i) res[i] = ResourceId(route.hops[i]);
    net_.Start(m.bytes, res, route.num_hops, static_cast<uint64_t>(id));
    return Status::Ok();
  }

  // The fluid resource standing for the class of `ref` under the symmetry.
  int ResourceId(const ResourceRef& ref) {
    const uint64_t key = static_cast<uint64_t>(ref.kind) * static_cast<uint64_t>(sym_.size()) +
                         static_cast<uint64_t>(sym_.Rep(ref.owner));
    auto [it, inserted] = resources_.try_emplace(key, 0);
    if (inserted) it->second = net_.AddResource(CapacityOf(c_, ref.kind));
    return it->second;
  }

  Status Complete(int id, double t) {
    const Message m = messages_[id];
    free_.push_back(id);
    WEFT_RETURN_IF_ERROR(Done(m.src_rep, t));
    return Done(m.dst_rep, t);
  }

  Status Done(int rep, double t) {
    if (--ranks_[rep].pending > 0) return Status::Ok();
    const double local = LocalSeconds(rep);
    if (local > 0) {
      Push(t + local, EventKind::kLocalDone, rep);
      return Status::Ok();
    }
    return NextRound(rep, t);
  }

  const ClusterSpec& c_;
  const Symmetry& sym_;
  const std::vector<sched::Schedule>& scheds_;
  const size_t elem_;
  std::vector<RankState> ranks_;
  std::unordered_map<uint64_t, PairQueue> queues_;
  std::unordered_map<uint64_t, int> resources_;
  std::vector<Message> messages_;
  std::vector<int> free_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  FluidNetwork net_;
  EngineResult result_;
};

}  // namespace

Result<EngineResult> RunEngine(const EngineInput& in) {
  if (in.cluster == nullptr || in.symmetry == nullptr || in.schedules == nullptr) {
    return InvalidArgument("RunEngine: missing cluster, symmetry or schedules");
  }
  if (static_cast<int>(in.schedules->size()) != in.symmetry->reps() ||
      in.symmetry->size() != in.cluster->ranks()) {
    return InvalidArgument(fmt::format(
        "RunEngine: {} schedules for {} representatives of {} ranks on a cluster of {}",
        in.schedules->size(), in.symmetry->reps(), in.symmetry->size(), in.cluster->ranks()));
  }
  return Engine(in).Run();
}

}  // namespace weft::sim
