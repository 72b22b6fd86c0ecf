// `weft-sim catalog`: prints the catalog's figures, status and sources.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace weft::sim::cli {

struct CatalogOptions {
  std::string catalog;
  std::string instance;
  bool show_sources = false;
};

CLI::App* AddCatalogCommand(CLI::App* app, CatalogOptions* o);
int RunCatalog(const CatalogOptions& o);

}  // namespace weft::sim::cli
