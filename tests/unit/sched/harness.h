// Test helpers for the schedule layer: per-rank int64 inputs, a reference result
// computed with plain loops (never through a schedule), and one call that builds every
// rank's schedule, interprets it and compares.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/registry.h"
#include "sched/schedule.h"

namespace weft::sched::testing {

using Buffers = std::vector<std::vector<int64_t>>;
using Op = std::function<int64_t(int64_t, int64_t)>;

inline int64_t Sum(int64_t a, int64_t b) { return a + b; }
inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// Distinct per rank and element: rank * 1000003 + i (InputCount elements per rank).
Buffers MakeInputs(const CollectiveSpec& spec);
// Inputs whose minimum moves between ranks (for min-reduction checks).
Buffers MakeScrambledInputs(const CollectiveSpec& spec);

// What every rank's output must hold (OutputCount elements per rank).
Buffers Reference(const CollectiveSpec& spec, const Buffers& inputs, const Op& op);

// Interprets `algorithm` for all ranks of `spec` on `inputs` with `op` and compares
// with Reference. The failure message names the case and the first wrong element.
::testing::AssertionResult RunAndCompare(const Algorithm& algorithm, const CollectiveSpec& spec,
                                         bool in_place, const Buffers& inputs, const Op& op);

std::string CaseName(const Algorithm& algorithm, const CollectiveSpec& spec, bool in_place);

}  // namespace weft::sched::testing
