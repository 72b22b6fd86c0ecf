#include "sim/data_dir.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <vector>

namespace weft::sim {
namespace {

// The folders to look in, in order. WEFT_SIM_DATA_FROM_BINDIR is the install's data folder
// relative to its bin folder ("../share/weft/sim"); WEFT_SIM_SOURCE_DATA_DIR the source
// tree's sim/ (both from sim/CMakeLists.txt).
std::vector<std::filesystem::path> DataDirs() {
  std::vector<std::filesystem::path> dirs;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path() / WEFT_SIM_DATA_FROM_BINDIR).lexically_normal());
  dirs.emplace_back(WEFT_SIM_SOURCE_DATA_DIR);
  return dirs;
}

}  // namespace

Result<std::string> ShippedDataPath(std::string_view relative) {
  std::string looked;
  for (const std::filesystem::path& dir : DataDirs()) {
    const std::filesystem::path file = dir / relative;
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec)) return file.string();
    looked += (looked.empty() ? "" : ", ") + dir.string();
  }
  return InvalidArgument(fmt::format("weft-sim's shipped {} is in none of: {}", relative, looked));
}

}  // namespace weft::sim
