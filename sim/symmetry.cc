// Rank symmetry groups and the equivariance check (see symmetry.h).
#include "sim/symmetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace weft::sim {
namespace {

bool IsPow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// What decides a round's timing: its messages (kind, peer, size) in order (the order
// matters: the per-message overhead posts each message after the ones before it,
// engine.h), and the total sizes of its local reductions and copies (their order and
// offsets do not change how long they take).
struct RoundSig {
  std::vector<sched::Step> comm;
  size_t reduce_elems = 0;
  size_t copy_elems = 0;
};

RoundSig Signature(const sched::Round& round) {
  RoundSig sig;
  for (const sched::Step& s : round.steps) {
    switch (s.kind) {
      case sched::StepKind::kSend:
      case sched::StepKind::kRecv:
        sig.comm.push_back(s);
        break;
      case sched::StepKind::kReduce:
        sig.reduce_elems += s.dst.count;
        break;
      case sched::StepKind::kCopy:
      case sched::StepKind::kPeerRead:
      case sched::StepKind::kPeerWrite:
        sig.copy_elems += s.dst.count;
        break;
      case sched::StepKind::kPeerReduce:
        sig.reduce_elems += s.dst.count;
        break;
      case sched::StepKind::kSync:  // a flag in shared memory: no message to model
        break;
    }
  }
  return sig;
}

size_t MessageCount(const sched::Step& s) {
  return s.kind == sched::StepKind::kSend ? s.src.count : s.dst.count;
}

// Is `other` (rank g(rep)'s schedule) `base` (rank rep's) mapped through g?
bool SameUpTo(const Symmetry& sym, int g, const sched::Schedule& base, const sched::Schedule& other,
              int rank, std::string* why) {
  if (base.rounds.size() != other.rounds.size()) {
    *why = fmt::format("rank {} has {} rounds, its representative {} has {}", rank,
                       other.rounds.size(), sym.Rep(rank), base.rounds.size());
    return false;
  }
  for (size_t i = 0; i < base.rounds.size(); ++i) {
    const RoundSig a = Signature(base.rounds[i]);
    const RoundSig b = Signature(other.rounds[i]);
    bool same = a.comm.size() == b.comm.size() && a.reduce_elems == b.reduce_elems &&
                a.copy_elems == b.copy_elems;
    for (size_t k = 0; same && k < a.comm.size(); ++k) {
      same = a.comm[k].kind == b.comm[k].kind && sym.Apply(g, a.comm[k].peer) == b.comm[k].peer &&
             MessageCount(a.comm[k]) == MessageCount(b.comm[k]);
    }
    if (!same) {
      *why = fmt::format("rank {} round {} is not its representative {}'s round mapped by {}", rank,
                         i, sym.Rep(rank), sym.ToString());
      return false;
    }
  }
  return true;
}

}  // namespace

int Symmetry::Apply(int g, int rank) const {
  switch (kind_) {
    case SymmetryKind::kNone:
      return rank;
    case SymmetryKind::kTranslation:
      return static_cast<int>((static_cast<long long>(rank) + g) % size_);
    case SymmetryKind::kXor:
      return rank ^ g;
  }
  return rank;
}

int Symmetry::Unapply(int g, int rank) const {
  switch (kind_) {
    case SymmetryKind::kNone:
      return rank;
    case SymmetryKind::kTranslation:
      return static_cast<int>((static_cast<long long>(rank) - g + size_) % size_);
    case SymmetryKind::kXor:
      return rank ^ g;
  }
  return rank;
}

std::string Symmetry::ToString() const {
  switch (kind_) {
    case SymmetryKind::kNone:
      return "none";
    case SymmetryKind::kTranslation:
      return fmt::format("translation/{}", period_);
    case SymmetryKind::kXor:
      return fmt::format("xor/{}", period_);
  }
  return "?";
}

int TopologyPeriod(const ClusterSpec& c) {
  return c.accels_per_host * (c.models_leaves() ? c.hosts_per_leaf : 1);
}

bool ClusterInvariant(const ClusterSpec& c, SymmetryKind kind, int period) {
  const int p = c.ranks();
  const int base = TopologyPeriod(c);
  if (period < base || period % base != 0 || p % period != 0) return false;
  if (kind == SymmetryKind::kXor) {
    // x ^ k*T must stay in range and keep the rank's place inside its host and leaf,
    // which holds when p and T are powers of two and T covers a whole leaf.
    return IsPow2(p) && IsPow2(period);
  }
  return true;
}

bool Equivariant(const Symmetry& sym, sched::Schedule (*build)(const sched::CollectiveSpec&),
                 const sched::CollectiveSpec& spec, const std::vector<sched::Schedule>& reps,
                 EquivarianceCheck check, std::string* why) {
  const int p = sym.size();
  const int t = sym.reps();
  if (sym.kind() == SymmetryKind::kNone || t == p) return true;
  std::vector<int> ranks;
  if (check == EquivarianceCheck::kExhaustive) {
    for (int r = t; r < p; ++r) ranks.push_back(r);
  } else {
    // A few representatives (both ends and spread between) against a few group
    // elements (the first, the last, and two in between). Algorithms break symmetry at
    // the edges (uneven chunks at the start, folds of extra ranks), which this catches.
    std::set<int> rep_sample = {0, t - 1};
    for (int i = 1; i < 8 && i < t; ++i) rep_sample.insert(i * t / 8);
    const int orbit = p / t;
    std::set<int> g_sample = {1, orbit - 1, orbit / 2, orbit / 3};
    for (int k : g_sample) {
      if (k <= 0 || k >= orbit) continue;
      for (int rep : rep_sample) ranks.push_back(sym.Apply(k * t, rep));
    }
  }
  sched::CollectiveSpec s = spec;
  for (int r : ranks) {
    s.rank = r;
    const sched::Schedule other = build(s);
    if (!SameUpTo(sym, sym.ElementOf(r), reps[sym.Rep(r)], other, r, why)) return false;
  }
  return true;
}

}  // namespace weft::sim
