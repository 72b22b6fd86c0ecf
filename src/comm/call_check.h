// WEFT_CHECK_CALLS: before a collective the ranks exchange a fingerprint of their call
// (collective, data type, operator, count, root) and compare them, so that ranks passing
// different arguments all fail with the same error naming the field and the ranks, before
// any data moves.
//
// Why, when every message carries a header (transport/wire.h)? The headers catch a
// mismatch only where a message flows between two disagreeing ranks. Different collectives,
// counts, data types and operators always make one (tests/unit/api/mismatch_test.cc), but
// different roots need not: two ranks that each think they are a broadcast's root only
// send, and would both "succeed" with the wrong data. So the default checks the rooted
// collectives (broadcast, reduce, gather, scatter), which are rarely in a training step's
// hot loop; "1" checks every collective, "0" none.
//
// Agreement costs one fixed-size allreduce (max) of each field and its negation, 80 bytes
// whatever the world size, so O(log n) small messages at scale rather than an allgather
// of 24 bytes per rank. Only when the ranges show a difference do the ranks allgather the
// fingerprints, to name who passed what.
//
// The fingerprint travels as bytes, so its decoding is written for untrusted input
// (tests/fuzz/call_check_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/call.h"
#include "core/status.h"

namespace weft::comm {

inline constexpr size_t kCallFingerprintBytes = 24;

enum class CheckCalls { kOff, kRooted, kAll };
// "" (the default) and "rooted": kRooted; "1": kAll; "0": kOff. InvalidArgument otherwise.
Result<CheckCalls> ParseCheckCalls(const std::string& value);
bool ShouldCheck(CheckCalls mode, const Call& call);

// What every rank of a collective must agree on. Fields a collective ignores are
// normalised (op 0 where nothing is reduced, root -1 where there is no root, count, dtype
// and op 0 for a barrier), so that only real disagreements count.
struct CallFingerprint {
  uint32_t coll = 0;
  uint32_t dtype = 0;
  uint32_t op = 0;
  int32_t root = -1;
  uint64_t count = 0;
  bool operator==(const CallFingerprint&) const = default;
};

CallFingerprint FingerprintOf(const Call& call);

// The happy path's exchange: for each of the 5 fields, the value and its negation, to be
// reduced with max across ranks (giving each field's max and -min).
inline constexpr size_t kFingerprintRangeWords = 10;
void FingerprintRange(const CallFingerprint& f, int64_t out[kFingerprintRangeWords]);
// True when, after the max-reduction, every field's max equals its min.
bool RangeAgrees(const int64_t reduced[kFingerprintRangeWords]);
// Little-endian, kCallFingerprintBytes bytes.
void EncodeFingerprint(const CallFingerprint& f, uint8_t* out);
CallFingerprint DecodeFingerprint(const uint8_t* in);

// Compares the fingerprints of all ranks (`all` holds size * kCallFingerprintBytes bytes in
// rank order, as an allgather leaves them). Ok when they agree. Otherwise InvalidUsage, the
// same text on every rank apart from the leading "rank <self>": the first field that
// differs and which ranks passed which value, then any other fields that differ, e.g.
//   rank 1: allreduce seq 7: the ranks passed different counts: ranks 0,2-3 passed 4096,
//   rank 1 passed 1024 (also different: root) [WEFT_CHECK_CALLS]
Status CompareFingerprints(const uint8_t* all, int size, int self, uint64_t seq);

// "0,2-5,7" for sorted ranks; at most `max_runs` runs, then ",... (N ranks)".
std::string RankList(const std::vector<int>& ranks, size_t max_runs = 8);

}  // namespace weft::comm
