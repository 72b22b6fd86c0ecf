// `weft-sim scale`: how long the simulator itself takes for one collective as the
// cluster grows (issue 7's "wall time vs ranks" curve), with the prediction beside it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "collective_cmd.h"

namespace weft::sim::cli {

struct ScaleOptions {
  ClusterOptions cluster;  // its `nodes` is ignored: see `nodes`
  std::string nodes = "8,16,32,64,128,256,512,1024,2048";
  std::string collective = "allreduce";
  std::string dtype = "float";
  std::string bytes = "1G";
  std::string algo;  // WEFT_ALGO syntax; empty: the planner's choice
  int repeat = 3;    // wall time: the median and the minimum of this many runs
  bool no_symmetry = false;
  std::string json_path;
  std::string plot_path;
};

CLI::App* AddScaleCommand(CLI::App* app, ScaleOptions* o);
int RunScale(const ScaleOptions& o);

}  // namespace weft::sim::cli
