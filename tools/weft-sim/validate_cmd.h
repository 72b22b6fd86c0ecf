// `weft-sim validate`: weft-bench's measured times (its --json files) against the
// simulator's predictions for the same cluster, with alpha fitted on the small sizes.
// Exits 1 when a size >= --check-from is off by more than --tolerance percent, so a
// test can hold the model to it (tests/sim/validate_netns.sh).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "collective_cmd.h"

namespace weft::sim::cli {

struct ValidateOptions {
  ClusterOptions cluster;
  std::string measured;  // comma-separated weft-bench --json files
  std::string fit_max = "64K";
  std::string check_from = "1M";
  double tolerance_pct = 10;
  bool no_fit = false;  // keep the cluster's alpha
  // Predict the algorithm each measurement ran (weft-bench's "algorithm") instead of
  // the planner's choice today: for files measured before the planner changed.
  bool predict_what_ran = false;
  std::string json_path;
  std::string plot_path;
};

CLI::App* AddValidateCommand(CLI::App* app, ValidateOptions* o);
int RunValidate(const ValidateOptions& o);

}  // namespace weft::sim::cli
