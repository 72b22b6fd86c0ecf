// weft-doctor DIR: one verdict per communicator from the flight-recorder dumps in DIR
// (WEFT_FLIGHT_RECORDER_DIR of every rank; on hosts of their own, copy them together).
#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "diagnose.h"

int main(int argc, char** argv) {
  CLI::App app{"weft-doctor: who is behind, missing or waiting, from flight-recorder dumps"};
  app.set_version_flag("--version", "weft-doctor (weft " WEFT_VERSION ")");
  std::string dir;
  bool json = false;
  app.add_option("dir", dir, "folder holding weft-fr-*.json dumps")->required();
  app.add_flag("--json", json, "print the verdicts as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's message (and its --help hint), but the exit codes of every weft tool:
    // 0 after --help or --version, 2 on a usage error (docs/CONFIGURATION.md, "Exit codes").
    return app.exit(e) == 0 ? 0 : 2;
  }

  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    std::fprintf(stderr, "weft-doctor: cannot open %s\n", dir.c_str());
    return 2;
  }
  std::vector<weft::doctor::Dump> dumps;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("weft-fr-", 0) != 0 || name.size() < 5 ||
        name.compare(name.size() - 5, 5, ".json") != 0)
      continue;
    std::ifstream in(dir + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    auto dump = weft::doctor::ParseDump(ss.str(), &error);
    if (!dump) {
      std::fprintf(stderr, "weft-doctor: skipping %s: %s\n", name.c_str(), error.c_str());
      continue;
    }
    dump->file = name;
    dumps.push_back(std::move(*dump));
  }
  closedir(d);
  if (dumps.empty()) {
    std::fprintf(stderr, "weft-doctor: no weft-fr-*.json dumps in %s\n", dir.c_str());
    return 2;
  }
  auto verdicts = weft::doctor::Diagnose(dumps);
  if (json) {
    std::printf("%s\n", weft::doctor::ToJson(verdicts).dump(2).c_str());
    return 0;
  }
  for (const auto& v : verdicts) {
    std::printf("communicator %s (%d ranks):\n", v.comm.c_str(), v.size);
    for (const auto& line : v.ranks) std::printf("  %s\n", line.c_str());
    std::printf("verdict: %s\n", v.summary.c_str());
  }
  return 0;
}
