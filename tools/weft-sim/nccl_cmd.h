// `weft-sim nccl-validate`: weft-sim's NCCL reference model (sim/nccl_model.h) held
// against published nccl-tests results (sim/calibration/published.csv), with the
// figures of sim/calibration/nccl_figures.json; --fit refits those figures first.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/status.h"
#include "sim/nccl_model.h"

namespace weft::sim::cli {

struct NcclValidateOptions {
  std::string data;     // empty: the shipped sim/calibration/published.csv
  std::string figures;  // empty: the shipped sim/calibration/nccl_figures.json
  std::string catalog;  // empty: the shipped instance catalog
  bool fit = false;
  bool markdown = false;
};

// The calibrated figure set covering `instance` in a figures file (empty path: the
// shipped sim/calibration/nccl_figures.json).
Result<NcclFigures> NcclFiguresFor(const std::string& path, const std::string& instance);

CLI::App* AddNcclValidateCommand(CLI::App* app, NcclValidateOptions* o);
int RunNcclValidate(const NcclValidateOptions& o);

}  // namespace weft::sim::cli
