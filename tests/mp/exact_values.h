// Small integers that every weft dtype holds exactly, for the allreduce checks of the
// registered-buffer tests (registered_mixed.cc, registered_single_pass.cc): rank r's
// element i is i % 4, plus `size` on the one rank r == i % size; for prod, 2 on that rank
// and 1 elsewhere. So sum is size * (i % 4) + size, avg that over size, and min, max and
// prod are known without a reference implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "weft/weft.h"

namespace weft::testing {

inline constexpr size_t kTypeSize[weftNumTypes] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
inline constexpr const char* kTypeName[weftNumTypes] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
    "float64"};
inline constexpr const char* kOpName[weftNumOps] = {"sum", "prod", "min", "max", "avg"};

// Small non-negative integers (< 2048) as float16 bits: exact.
inline uint16_t HalfOf(int k) {
  if (k == 0) return 0;
  int e = 31 - __builtin_clz(static_cast<unsigned>(k));
  return static_cast<uint16_t>(((e + 15) << 10) | ((k << (10 - e)) & 0x3ff));
}
inline uint16_t Bf16Of(int k) {
  float f = static_cast<float>(k);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);  // exact: small integers need no rounding
}

// Writes k as element i of a buffer of dtype t.
inline void Store(weftDataType_t t, void* buf, size_t i, int k) {
  char* p = static_cast<char*>(buf) + i * kTypeSize[t];
  switch (t) {
    case weftInt8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(k); break;
    case weftUint8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(k); break;
    case weftInt32: *reinterpret_cast<int32_t*>(p) = k; break;
    case weftUint32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(k); break;
    case weftInt64: *reinterpret_cast<int64_t*>(p) = k; break;
    case weftUint64: *reinterpret_cast<uint64_t*>(p) = static_cast<uint64_t>(k); break;
    case weftFloat16: *reinterpret_cast<uint16_t*>(p) = HalfOf(k); break;
    case weftBfloat16: *reinterpret_cast<uint16_t*>(p) = Bf16Of(k); break;
    case weftFloat32: *reinterpret_cast<float*>(p) = static_cast<float>(k); break;
    default: *reinterpret_cast<double*>(p) = static_cast<double>(k); break;
  }
}

// Rank `rank`'s element i for `op` (int8 holds the largest sum, 8 * 3 + 8).
inline int Input(weftRedOp_t op, int rank, int size, size_t i) {
  const bool mine = static_cast<int>(i % size) == rank;
  if (op == weftProd) return mine ? 2 : 1;
  return static_cast<int>(i % 4) + (mine ? size : 0);
}

// The reduced element i over `size` ranks.
inline int Expected(weftRedOp_t op, int size, size_t i) {
  const int base = static_cast<int>(i % 4);
  switch (op) {
    case weftSum: return size * base + size;
    case weftProd: return 2;
    case weftMin: return size == 1 ? base + 1 : base;
    case weftMax: return base + size;
    default: return base + 1;  // avg: (size * base + size) / size
  }
}

}  // namespace weft::testing
