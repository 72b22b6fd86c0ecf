// weft-sim: predicts collective times at cluster scale by running the library's own
// schedules against a network model (see docs/SIMULATOR.md).
#include <CLI/CLI.hpp>

#include "catalog_cmd.h"
#include "collective_cmd.h"
#include "nccl_cmd.h"
#include "scale_cmd.h"
#include "train_cmd.h"
#include "validate_cmd.h"

int main(int argc, char** argv) {
  using namespace weft::sim::cli;
  CLI::App app{"weft-sim: predict collective times from weft's own schedules"};
  app.set_version_flag("--version", "weft-sim (weft " WEFT_VERSION ")");
  app.require_subcommand(1);
  CollectiveOptions collective;
  CatalogOptions catalog;
  CLI::App* collective_cmd = AddCollectiveCommand(&app, &collective);
  CLI::App* catalog_cmd = AddCatalogCommand(&app, &catalog);
  ValidateOptions validate;
  TrainOptions train, compare;
  CLI::App* train_cmd = AddTrainCommand(&app, &train);
  CLI::App* compare_cmd = AddCompareCommand(&app, &compare);
  CLI::App* validate_cmd = AddValidateCommand(&app, &validate);
  ScaleOptions scale;
  CLI::App* scale_cmd = AddScaleCommand(&app, &scale);
  NcclValidateOptions nccl_validate;
  CLI::App* nccl_validate_cmd = AddNcclValidateCommand(&app, &nccl_validate);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's message (and its --help hint), but the exit codes of every weft tool:
    // 0 after --help or --version, 2 on a usage error (docs/CONFIGURATION.md, "Exit codes").
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (collective_cmd->parsed()) return RunCollective(collective);
  if (catalog_cmd->parsed()) return RunCatalog(catalog);
  if (validate_cmd->parsed()) return RunValidate(validate);
  if (train_cmd->parsed()) return RunTrain(train);
  if (compare_cmd->parsed()) return RunCompare(compare);
  if (scale_cmd->parsed()) return RunScale(scale);
  if (nccl_validate_cmd->parsed()) return RunNcclValidate(nccl_validate);
  return 2;
}
