#include "comm/call_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "core/types.h"
#include "sched/schedule.h"

namespace weft::comm {
namespace {

void PutLe(uint8_t* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLe(const uint8_t* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}

enum class Field { kCollective, kDtype, kOp, kCount, kRoot };
constexpr std::array<Field, 5> kFields = {Field::kCollective, Field::kDtype, Field::kOp,
                                          Field::kCount, Field::kRoot};

int64_t ValueOf(const CallFingerprint& f, Field field) {
  switch (field) {
    case Field::kCollective: return f.coll;
    case Field::kDtype: return f.dtype;
    case Field::kOp: return f.op;
    case Field::kCount: return static_cast<int64_t>(f.count);
    case Field::kRoot: return f.root;
  }
  return 0;
}

const char* FieldName(Field field) {
  switch (field) {
    case Field::kCollective: return "collective";
    case Field::kDtype: return "data type";
    case Field::kOp: return "reduction operator";
    case Field::kCount: return "count";
    case Field::kRoot: return "root";
  }
  return "?";
}

const char* Difference(Field field) {
  switch (field) {
    case Field::kCollective: return "the ranks called different collectives";
    case Field::kDtype: return "the ranks passed different data types";
    case Field::kOp: return "the ranks passed different reduction operators";
    case Field::kCount: return "the ranks passed different counts";
    case Field::kRoot: return "the ranks passed different roots";
  }
  return "?";
}

// A value as the user wrote it; the numbers came from peers, so unknown ones print raw.
std::string Show(Field field, int64_t v) {
  switch (field) {
    case Field::kCollective:
      if (v >= 0 && v < sched::kNumCollectives)
        return sched::CollectiveName(static_cast<sched::Collective>(v));
      break;
    case Field::kDtype:
      if (v >= 0 && v < kNumDataTypes) return DataTypeName(static_cast<DataType>(v));
      break;
    case Field::kOp:
      if (v >= 0 && v < kNumRedOps) return RedOpName(static_cast<RedOp>(v));
      break;
    case Field::kCount: return fmt::format("{}", static_cast<uint64_t>(v));
    case Field::kRoot: return v < 0 ? "no root" : fmt::format("{}", v);
  }
  return fmt::format("unknown value {}", v);
}

}  // namespace

Result<CheckCalls> ParseCheckCalls(const std::string& value) {
  if (value.empty() || value == "rooted") return CheckCalls::kRooted;
  if (value == "1") return CheckCalls::kAll;
  if (value == "0") return CheckCalls::kOff;
  return InvalidArgument(
      fmt::format("WEFT_CHECK_CALLS={}: expected 0, 1 or rooted (the default)", value));
}

bool ShouldCheck(CheckCalls mode, const Call& call) {
  if (call.kind != CallKind::kCollective) return false;
  switch (mode) {
    case CheckCalls::kOff: return false;
    case CheckCalls::kRooted: return HasRoot(call.coll);
    case CheckCalls::kAll: return true;
  }
  return false;
}

CallFingerprint FingerprintOf(const Call& call) {
  CallFingerprint f;
  f.coll = static_cast<uint32_t>(call.coll);
  if (call.coll == sched::Collective::kBarrier) return f;
  f.dtype = static_cast<uint32_t>(call.dtype);
  f.op = Reduces(call.coll) ? static_cast<uint32_t>(call.op) : 0;
  f.root = HasRoot(call.coll) ? call.root : -1;
  f.count = call.count;
  return f;
}

void FingerprintRange(const CallFingerprint& f, int64_t out[kFingerprintRangeWords]) {
  for (size_t i = 0; i < kFields.size(); ++i) {
    out[2 * i] = ValueOf(f, kFields[i]);
    out[2 * i + 1] = -ValueOf(f, kFields[i]);
  }
}

bool RangeAgrees(const int64_t reduced[kFingerprintRangeWords]) {
  for (size_t i = 0; i < kFields.size(); ++i)
    if (reduced[2 * i] != -reduced[2 * i + 1]) return false;
  return true;
}

void EncodeFingerprint(const CallFingerprint& f, uint8_t* out) {
  PutLe(out, f.coll, 4);
  PutLe(out + 4, f.dtype, 4);
  PutLe(out + 8, f.op, 4);
  PutLe(out + 12, static_cast<uint32_t>(f.root), 4);
  PutLe(out + 16, f.count, 8);
}

CallFingerprint DecodeFingerprint(const uint8_t* in) {
  CallFingerprint f;
  f.coll = static_cast<uint32_t>(GetLe(in, 4));
  f.dtype = static_cast<uint32_t>(GetLe(in + 4, 4));
  f.op = static_cast<uint32_t>(GetLe(in + 8, 4));
  f.root = static_cast<int32_t>(static_cast<uint32_t>(GetLe(in + 12, 4)));
  f.count = GetLe(in + 16, 8);
  return f;
}

std::string RankList(const std::vector<int>& ranks, size_t max_runs) {
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (runs == max_runs) {
      out += fmt::format(",... ({} ranks)", ranks.size());
      break;
    }
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    ++runs;
    i = j + 1;
  }
  return out;
}

Status CompareFingerprints(const uint8_t* all, int size, int self, uint64_t seq) {
  std::vector<CallFingerprint> calls(size);
  for (int r = 0; r < size; ++r) calls[r] = DecodeFingerprint(all + r * kCallFingerprintBytes);
  std::vector<Field> differing;
  for (Field field : kFields) {
    for (int r = 1; r < size; ++r) {
      if (ValueOf(calls[r], field) != ValueOf(calls[0], field)) {
        differing.push_back(field);
        break;
      }
    }
  }
  if (differing.empty()) return Status::Ok();

  const Field first = differing.front();
  std::map<int64_t, std::vector<int>> by_value;  // rank lists come out sorted
  for (int r = 0; r < size; ++r) by_value[ValueOf(calls[r], first)].push_back(r);
  // The most common value first (what the odd ranks out differ from), then by lowest rank.
  std::vector<std::pair<int64_t, std::vector<int>>> groups_by_size(by_value.begin(),
                                                                   by_value.end());
  std::stable_sort(groups_by_size.begin(), groups_by_size.end(), [](auto& a, auto& b) {
    if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
    return a.second.front() < b.second.front();
  });
  std::string groups;
  size_t shown = 0;
  for (const auto& [value, ranks] : groups_by_size) {
    if (shown == 4) {
      groups += fmt::format("; and {} more values", groups_by_size.size() - shown);
      break;
    }
    if (!groups.empty()) groups += "; ";
    groups += fmt::format("{} {} passed {}", ranks.size() == 1 ? "rank" : "ranks",
                          RankList(ranks), Show(first, value));
    ++shown;
  }
  std::string also;
  // Under different collectives the other fields are not comparable.
  for (size_t i = 1; first != Field::kCollective && i < differing.size(); ++i)
    also += fmt::format("{}{}", also.empty() ? " (also different: " : ", ",
                        FieldName(differing[i]));
  if (!also.empty()) also += ")";
  // Name the call as this rank made it.
  const std::string what = Show(Field::kCollective, calls[self].coll);
  return InvalidUsage(fmt::format("rank {}: {} seq {}: {}: {}{} [WEFT_CHECK_CALLS]", self, what,
                                  seq, Difference(first), groups, also));
}

}  // namespace weft::comm
