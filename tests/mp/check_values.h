// What every rank puts in and what it must get out, as pure functions of
// (dtype, reduction, rank, index, salt). Inputs are chosen so that integer results are
// exact and never overflow even the 8-bit types for world sizes up to 42 (float16
// products stay normal up to 16 ranks); float results come with an error bound derived
// from the number of terms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "weft/weft.h"

namespace check {

// The input of `rank` at element `index`, already rounded to `dtype`. `op` is the
// reduction the value will feed (its range depends on it: products use only a few
// factors of 1, 2, -1, ...); nullopt for data-movement collectives, which get values
// that differ between ranks and indices so a misplaced element is detected. `salt`
// differs per test case so a stale result from an earlier case cannot pass.
double InputValue(weftDataType_t dtype, std::optional<weftRedOp_t> op, int rank, size_t index,
                  uint64_t salt);

struct Expected {
  double value;
  double tolerance;  // |got - value| <= tolerance; 0: exact
};

// The reduction of every rank's InputValue at `index`, over `nranks` ranks.
Expected ReducedValue(weftDataType_t dtype, weftRedOp_t op, int nranks, size_t index,
                      uint64_t salt);

bool Matches(const Expected& e, double got);

}  // namespace check
