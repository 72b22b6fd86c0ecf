// A flow-level ("fluid") network: resources with a capacity in bytes per second, flows
// that each cross a few resources, and max-min fair rates.
//
// Why flow level and not packets: a collective at 16,384 ranks moves millions of
// messages; what decides its time is how the bandwidth of each shared resource (a NIC's
// egress, a switch uplink) is divided among the messages crossing it, not the packets.
// Max-min fairness is the steady state that TCP-like and credit-based transports
// approach, and it reduces to "n flows on one link get 1/n each".
//
// Rates are recomputed (progressive filling) lazily, only after flows were added or
// removed. Time only moves forward through AdvanceTo().
//
// Not thread-safe; one simulation owns one network.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::sim {

inline constexpr int kMaxHops = 4;  // resources one flow may cross

class FluidNetwork {
 public:
  // Adds a resource; returns its id. REQUIRES: capacity > 0 (bytes/s).
  int AddResource(double capacity);
  double Capacity(int resource) const { return capacity_[resource]; }

  // Starts a flow of `bytes` (> 0) over `resources` (1..kMaxHops ids, distinct) at the
  // current time. `tag` is returned when the flow completes.
  void Start(double bytes, const int* resources, int num_resources, uint64_t tag);

  // Absolute time at which the next flow completes; +inf when none is active.
  double NextCompletion();
  // Moves the clock to `t` (>= now), draining every flow at its current rate, and
  // appends the tags of the flows that are finished by then (within a relative 1e-12,
  // so that flows that a symmetric system finishes "together" finish in one batch).
  void AdvanceTo(double t, std::vector<uint64_t>* completed);

  double now() const { return now_; }
  size_t active() const { return flows_.size(); }

 private:
  struct Flow {
    double remaining = 0;  // bytes
    double rate = 0;       // bytes/s, valid when !dirty_
    std::array<int, kMaxHops> res{};
    int nres = 0;
    uint64_t tag = 0;
  };
  void Recompute();

  std::vector<double> capacity_;
  std::vector<Flow> flows_;
  double now_ = 0;
  bool dirty_ = false;
  // Scratch for Recompute, kept to avoid reallocation on every event.
  std::vector<double> residual_;
  std::vector<int> unfrozen_count_;
  std::vector<int> csr_begin_, csr_flows_;
  std::vector<char> frozen_;
};

}  // namespace weft::sim
