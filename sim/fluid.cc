// Max-min fair rates by progressive filling: raise every unfrozen flow's rate together;
// the first resource to saturate fixes the rate of the flows crossing it; repeat.
#include "sim/fluid.h"

#include <algorithm>
#include <limits>

namespace weft::sim {
namespace {

// Relative slack under which two shares or two finish times count as equal. Symmetric
// ranks compute bit-identical numbers, but this keeps near-ties (1 ulp apart after many
// rounds) in one batch, so one rate recomputation serves them all.
constexpr double kRelTie = 1e-12;

}  // namespace

int FluidNetwork::AddResource(double capacity) {
  capacity_.push_back(capacity);
  return static_cast<int>(capacity_.size()) - 1;
}

void FluidNetwork::Start(double bytes, const int* resources, int num_resources, uint64_t tag) {
  Flow f;
  f.remaining = bytes;
  f.nres = std::min(num_resources, kMaxHops);
  for (int i = 0; i < f.nres; ++i) f.res[i] = resources[i];
  f.tag = tag;
  flows_.push_back(f);
  dirty_ = true;
}

void FluidNetwork::Recompute() {
  dirty_ = false;
  const size_t nr = capacity_.size();
  const size_t nf = flows_.size();
  residual_.assign(capacity_.begin(), capacity_.end());
  unfrozen_count_.assign(nr, 0);
  for (const Flow& f : flows_) {
    for (int i = 0; i < f.nres; ++i) ++unfrozen_count_[f.res[i]];
  }
  // Resource -> flows, as compressed rows.
  csr_begin_.assign(nr + 1, 0);
  for (size_t r = 0; r < nr; ++r) csr_begin_[r + 1] = csr_begin_[r] + unfrozen_count_[r];
  csr_flows_.resize(csr_begin_[nr]);
  std::vector<int> cursor(csr_begin_.begin(), csr_begin_.end() - 1);
  for (size_t fi = 0; fi < nf; ++fi) {
    const Flow& f = flows_[fi];
    for (int i = 0; i < f.nres; ++i) csr_flows_[cursor[f.res[i]]++] = static_cast<int>(fi);
  }
  frozen_.assign(nf, 0);

  size_t left = nf;
  while (left > 0) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t r = 0; r < nr; ++r) {
      if (unfrozen_count_[r] > 0) best = std::min(best, residual_[r] / unfrozen_count_[r]);
    }
    best = std::max(best, 0.0);
    // Freeze every flow on every resource that saturates at this level. A resource's
    // share can only grow as flows elsewhere freeze at `best`, so checking it when we
    // reach it is exact.
    for (size_t r = 0; r < nr; ++r) {
      if (unfrozen_count_[r] == 0) continue;
      if (residual_[r] / unfrozen_count_[r] > best * (1 + kRelTie)) continue;
      for (int k = csr_begin_[r]; k < csr_begin_[r + 1]; ++k) {
        const int fi = csr_flows_[k];
        if (frozen_[fi]) continue;
        frozen_[fi] = 1;
        --left;
        Flow& f = flows_[fi];
        f.rate = best;
        for (int i = 0; i < f.nres; ++i) {
          residual_[f.res[i]] = std::max(0.0, residual_[f.res[i]] - best);
          --unfrozen_count_[f.res[i]];
        }
      }
    }
  }
}

double FluidNetwork::NextCompletion() {
  if (dirty_) Recompute();
  double next = std::numeric_limits<double>::infinity();
  for (const Flow& f : flows_) {
    if (f.rate > 0) next = std::min(next, now_ + f.remaining / f.rate);
  }
  return next;
}

void FluidNetwork::AdvanceTo(double t, std::vector<uint64_t>* completed) {
  if (dirty_) Recompute();
  const double dt = std::max(0.0, t - now_);
  const double horizon = t + kRelTie * t;
  size_t i = 0;
  while (i < flows_.size()) {
    Flow& f = flows_[i];
    const bool done = f.rate > 0 && now_ + f.remaining / f.rate <= horizon;
    if (done) {
      completed->push_back(f.tag);
      flows_[i] = flows_.back();
      flows_.pop_back();
      dirty_ = true;
      continue;
    }
    f.remaining -= f.rate * dt;
    ++i;
  }
  now_ = std::max(now_, t);
}

}  // namespace weft::sim
