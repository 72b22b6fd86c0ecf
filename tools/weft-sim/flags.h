// The flags several weft-sim subcommands share, spelled as weft-bench and nccl-tests spell
// them (--collective NAME, -d TYPE, sizes as 8/1K/64M/1G), plus -N/--nodes (Slurm's and
// mpirun's letter for a node count). Values are checked here so that each bad one is
// reported alone, with what is accepted.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

#include "core/status.h"
#include "core/types.h"
#include "sched/schedule.h"

namespace weft::sim::cli {

// --collective NAME, into `collective`. nccl-tests' -o/--op (its reduction, which weft-sim
// does not take) is refused with a message that names --collective.
void AddCollectiveOption(CLI::App* cmd, std::string* collective);

// `flags` (e.g. "-n") are refused at parse time with `why` as the message (a usage error):
// for spellings that mean something else in nccl-tests or weft-bench.
void RefuseOption(CLI::App* cmd, const std::string& flags, const std::string& why);

// Why -n is refused where the node count is -N/--nodes.
inline constexpr const char* kNodesNotN =
    "-n is nccl-tests' iteration count; weft-sim takes the node count as -N/--nodes";

// The value of --collective, -d/--datatype or a size flag (`flag` names it in the error),
// or an InvalidArgument naming the flag, the value and what is accepted.
Result<sched::Collective> ParseCollectiveFlag(const std::string& value);
Result<DataType> ParseDataTypeFlag(const std::string& value);
Result<size_t> ParseSizeFlag(const std::string& flag, const std::string& value);

}  // namespace weft::sim::cli
