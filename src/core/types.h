// Element types and reduction operators, shared by every layer. The numeric values
// match the public C enums (weftDataType_t, weftRedOp_t) one to one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace weft {

enum class DataType : int {
  kInt8 = 0, kUint8, kInt32, kUint32, kInt64, kUint64,
  kFloat16, kBfloat16, kFloat32, kFloat64,
};
inline constexpr int kNumDataTypes = 10;

enum class RedOp : int { kSum = 0, kProd, kMin, kMax, kAvg };
inline constexpr int kNumRedOps = 5;

size_t DataTypeSize(DataType t);
const char* DataTypeName(DataType t);   // "float32", "bfloat16", ...
const char* RedOpName(RedOp op);        // "sum", "prod", "min", "max", "avg"
// Accepts the canonical names and common aliases (float/half/bf16/double/int/...).
std::optional<DataType> ParseDataType(std::string_view name);
std::optional<RedOp> ParseRedOp(std::string_view name);

}  // namespace weft
