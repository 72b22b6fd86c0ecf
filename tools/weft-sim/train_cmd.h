// `weft-sim train` (the data-parallel step of a catalog model on 1..N instances) and
// `weft-sim compare` (the same across instance types): step time, samples/s, scaling
// efficiency, cost per step and per million samples per purchase option. `compare
// --reference nccl` compares weft's allreduce with the NCCL reference instead
// (reference_cmd.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "collective_cmd.h"
#include "sim/train.h"

namespace weft::sim::cli {

struct TrainOptions {
  ClusterOptions cluster;  // nodes is ignored: see `nodes`
  std::string instances;   // compare: comma-separated; train: cluster.instance
  std::string nodes = "1,2,4,8,16";
  std::string model = "bert-large";
  std::string models_path;  // empty: the shipped catalog
  TrainConfig cfg;          // cfg.efficiency is set per instance from `efficiency`
  std::string efficiency;   // empty: the catalog's; see ParseEfficiencyOverride
  double bucket_mib = 25;
  int batch = 0;    // 0: the model's micro_batch
  int seq_len = 0;  // 0: the model's
  std::string json_path, plot_path;
  // compare --reference nccl (reference_cmd.h): weft's allreduce against the NCCL
  // reference over these sizes instead of training; the training options are not read.
  std::string reference;
  std::string min_bytes = "1M", max_bytes = "8G";
  double factor = 4;
};

CLI::App* AddTrainCommand(CLI::App* app, TrainOptions* o);
CLI::App* AddCompareCommand(CLI::App* app, TrainOptions* o);
int RunTrain(const TrainOptions& o);
int RunCompare(const TrainOptions& o);

}  // namespace weft::sim::cli
