#include "flags.h"

#include <fmt/format.h>

#include "common/byte_size.h"

namespace weft::sim::cli {
namespace {

std::string CollectiveNames() {
  std::string names;
  for (int i = 0; i < sched::kNumCollectives; ++i)
    names += (i ? ", " : "") + std::string(sched::CollectiveName(static_cast<sched::Collective>(i)));
  return names;
}

}  // namespace

void RefuseOption(CLI::App* cmd, const std::string& flags, const std::string& why) {
  // No group: hidden from --help. A value or none, so that "-n 4" and a bare "-n" both
  // get the message rather than CLI11's own about a missing value.
  cmd->add_option(flags, [why](const CLI::results_t&) -> bool { throw CLI::ValidationError(why); },
                  "")
      ->expected(0, 1)
      ->group("");
}

void AddCollectiveOption(CLI::App* cmd, std::string* collective) {
  cmd->add_option("--collective", *collective, "collective: " + CollectiveNames())->capture_default_str();
  RefuseOption(cmd, "-o,--op",
               "-o/--op is nccl-tests' reduction, which weft-sim does not take; name the "
               "collective with --collective NAME");
}

Result<sched::Collective> ParseCollectiveFlag(const std::string& value) {
  if (auto c = sched::CollectiveFromName(value)) return *c;
  return InvalidArgument(
      fmt::format("--collective '{}' is not one of: {}", value, CollectiveNames()));
}

Result<DataType> ParseDataTypeFlag(const std::string& value) {
  if (auto t = ParseDataType(value)) return *t;
  std::string names;
  for (int i = 0; i < kNumDataTypes; ++i)
    names += (i ? ", " : "") + std::string(DataTypeName(static_cast<DataType>(i)));
  return InvalidArgument(fmt::format(
      "-d/--datatype '{}' is not one of: {} (or the aliases char, int, uint, half, fp16, bf16, "
      "float, fp32, double, fp64)", value, names));
}

Result<size_t> ParseSizeFlag(const std::string& flag, const std::string& value) {
  if (auto b = tools::ParseByteSize(value)) return *b;
  return InvalidArgument(
      fmt::format("{} '{}' is not a size: expected {}", flag, value, tools::kByteSizeSyntax));
}

}  // namespace weft::sim::cli
