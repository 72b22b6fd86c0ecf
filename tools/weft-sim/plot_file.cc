// WritePlot: picks the format from the file name, writes it, and leaves nothing behind
// when it fails.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "plot.h"
#ifdef WEFT_SIM_HAVE_PNG
#include "svg_to_png.h"
#endif

namespace weft::sim::cli {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool Refuse(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "weft-sim: --plot %s: %s\n", path.c_str(), why.c_str());
  return false;
}

// PNGs are drawn at twice the SVG's size, so text stays legible when the image is
// shown at its natural size on a high-density screen.
constexpr double kPngScale = 2.0;

}  // namespace

std::string PlotPathProblem(const std::string& path) {
  if (EndsWith(path, ".svg")) return "";
  if (!EndsWith(path, ".png"))
    return "name the file *.svg or *.png (the format follows the extension)";
#ifdef WEFT_SIM_HAVE_PNG
  return "";
#else
  return "this weft-sim was built without librsvg (Debian: librsvg2-dev), so it writes SVG "
         "only; name the file *.svg";
#endif
}

void AddPlotOption(CLI::App* cmd, std::string* path, const std::string& what) {
  cmd->add_option("--plot", *path, "write " + what + " to FILE.svg or FILE.png")
      ->check(PlotPathProblem, "FILE.svg|FILE.png");
}

bool WritePlot(const std::string& path, const PlotSpec& spec, const std::vector<Series>& series) {
  if (const std::string problem = PlotPathProblem(path); !problem.empty())
    return Refuse(path, problem);
  const std::string svg = RenderSvgPlot(spec, series);
#ifdef WEFT_SIM_HAVE_PNG
  if (EndsWith(path, ".png")) {
    const std::string error = SvgToPng(svg, kPlotWidth, kPlotHeight, kPngScale, path);
    if (error.empty()) return true;
    std::remove(path.c_str());
    return Refuse(path, "cannot write PNG: " + error);
  }
#endif
  std::ofstream out(path);
  if (!out || !(out << svg) || !out.flush()) {
    const std::string why = std::strerror(errno);
    std::remove(path.c_str());
    return Refuse(path, "cannot write: " + why);
  }
  return true;
}

}  // namespace weft::sim::cli
