// What every rank puts in and what it must get out, as pure functions of
// (dtype, reduction, rank, index, salt). Inputs are chosen so that integer results are
// exact and never overflow even the 8-bit types for world sizes up to 42 (float16
// products stay normal up to 16 ranks); float results come with an error bound derived
// from the number of terms.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "weft/weft.h"

namespace check {

struct Expected {
  double value;
  double tolerance;  // |got - value| <= tolerance; 0: exact
};

// The values of one test case. Each input is a hash of (salt, rank, index) reduced to
// one of a few hundred values; those are rounded to the dtype once, here, so that
// generating and checking 65 537 elements on 8 ranks costs a hash and a table load per
// term rather than a float16 codec round trip (the checker, not the library, was what
// the multi-process tests spent their time on).
class CaseValues {
 public:
  // `op`: the reduction the values feed (its range depends on it: products use only a
  // few factors of 1, 2, -1, ...); nullopt for data-movement collectives, which get
  // values that differ between ranks and indices so a misplaced element is detected.
  // `salt` differs per test case so a stale result from an earlier case cannot pass.
  CaseValues(weftDataType_t dtype, std::optional<weftRedOp_t> op, int nranks, uint64_t salt);

  // The input of `rank` at element `index`, already rounded to the dtype.
  double Input(int rank, size_t index) const { return table_[TableOf(rank)][Bucket(rank, index)]; }
  // The same input as the dtype stores it (its bit pattern in the low bytes), so that
  // filling and checking moved data are a store and a compare per element.
  uint64_t InputBits(int rank, size_t index) const {
    return bits_[TableOf(rank)][Bucket(rank, index)];
  }
  // The reduction of every rank's input at `index` (needs an op).
  Expected Reduced(size_t index) const;

 private:
  // splitmix64: a well-mixed hash, so neighbouring ranks and indices get unrelated
  // values, and every bit of it counts for the bucket.
  static uint64_t Mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  uint64_t Hash(int rank, size_t index) const {
    return Mix(rank_seeds_[static_cast<size_t>(rank)] ^ index);
  }
  // The high half of hash * modulus: a bucket in [0, modulus) without a division.
  uint64_t Bucket(int rank, size_t index) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Hash(rank, index)) * modulus_) >>
                                 64);
  }
  // Products depend on the rank: only ranks below 6 may contribute a factor of 2.
  static int TableOf(int rank) { return rank < 6 ? 0 : 1; }

  std::optional<weftRedOp_t> op_;
  int nranks_;
  double eps_;
  bool is_float_;
  uint64_t modulus_;
  std::vector<uint64_t> rank_seeds_;
  std::array<std::vector<double>, 2> table_;  // [TableOf(rank)][bucket]
  std::array<std::vector<uint64_t>, 2> bits_;  // the same, as stored
};

inline bool Matches(const Expected& e, double got) {
  if (e.tolerance == 0) return got == e.value;     // false for a NaN
  return std::fabs(got - e.value) <= e.tolerance;  // false for a NaN
}

}  // namespace check
