// Check mode: inputs that depend on (rank, index) and whose exact results are
// computable, the expected value of every received element, and the count of
// elements that differ.
//
// Values are small integers so that results are exact even in bfloat16 (8 significant
// bits) for small worlds: sums of {-1..2}, products of {-1, 1} (unsigned: {1, 2},
// wrapping), min/max of {-5..5}, and data movement of {-48..48} spread over 97
// residues, so a misplaced block shows. Integer results wrap like the library's
// arithmetic; float sums get a tolerance of one rounding per term, so large worlds in
// float16/bfloat16 (where partial sums stop being exact) are not flagged.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <cstdint>

#include "collectives.h"

namespace weftbench {

struct CheckSpec {
  const Collective* coll;
  weftDataType_t dtype;
  weftRedOp_t redop;
  int root;
  int rank;
  int nranks;
  size_t count;  // the API count
};

// Writes this rank's inputs into send[0, send_elems).
void FillInputs(const CheckSpec& s, void* send);
// Overwrites recv[0, recv_elems) with a value no result should have, so an element
// the collective failed to write is counted wrong.
void Poison(const CheckSpec& s, void* recv);
// Elements of recv[0, recv_elems) that differ from what the collective must produce.
int64_t CountWrong(const CheckSpec& s, const void* recv);

}  // namespace weftbench
