// Which torch dtypes and reduce ops weft can reduce, and how they map.
//
// Data-moving collectives (broadcast, allgather, gather, scatter, alltoall, send/recv)
// do not go through here: they move bytes, so every dtype works for them.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <weft/weft.h>

namespace weft_torch {

struct Reduction {
  weftDataType_t dtype;
  weftRedOp_t op;
};

// Throws a TypeError/ValueError that names the dtype and op when weft cannot reduce them
// (e.g. SUM on bool, int16, BAND, PREMUL_SUM).
Reduction ToReduction(at::ScalarType type, const c10d::ReduceOp& op);

}  // namespace weft_torch
