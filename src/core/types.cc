#include "core/types.h"

#include <string>

namespace weft {
namespace {

struct TypeInfo {
  DataType type;
  size_t size;
  const char* name;
  bool floating;
};

constexpr TypeInfo kTypes[kNumDataTypes] = {
    {DataType::kInt8, 1, "int8", false},       {DataType::kUint8, 1, "uint8", false},
    {DataType::kInt32, 4, "int32", false},     {DataType::kUint32, 4, "uint32", false},
    {DataType::kInt64, 8, "int64", false},     {DataType::kUint64, 8, "uint64", false},
    {DataType::kFloat16, 2, "float16", true},  {DataType::kBfloat16, 2, "bfloat16", true},
    {DataType::kFloat32, 4, "float32", true},  {DataType::kFloat64, 8, "float64", true},
};

constexpr const char* kOpNames[kNumRedOps] = {"sum", "prod", "min", "max", "avg"};

}  // namespace

size_t DataTypeSize(DataType t) { return kTypes[static_cast<int>(t)].size; }
const char* DataTypeName(DataType t) { return kTypes[static_cast<int>(t)].name; }
const char* RedOpName(RedOp op) { return kOpNames[static_cast<int>(op)]; }

std::optional<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kTypes)
    if (name == info.name) return info.type;
  struct Alias { const char* alias; DataType type; };
  static constexpr Alias kAliases[] = {
      {"char", DataType::kInt8},     {"int", DataType::kInt32},
      {"uint", DataType::kUint32},   {"half", DataType::kFloat16},
      {"fp16", DataType::kFloat16},  {"bf16", DataType::kBfloat16},
      {"float", DataType::kFloat32}, {"fp32", DataType::kFloat32},
      {"double", DataType::kFloat64}, {"fp64", DataType::kFloat64},
  };
  for (const auto& a : kAliases)
    if (name == a.alias) return a.type;
  return std::nullopt;
}

std::optional<RedOp> ParseRedOp(std::string_view name) {
  for (int i = 0; i < kNumRedOps; ++i)
    if (name == kOpNames[i]) return static_cast<RedOp>(i);
  if (name == "product") return RedOp::kProd;
  return std::nullopt;
}

}  // namespace weft
