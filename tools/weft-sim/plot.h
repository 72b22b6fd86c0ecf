// weft-sim's one chart type: a line plot with a log2 x axis and a linear y axis.
// The chart is drawn once, as SVG; a PNG is that same SVG rasterised (librsvg), so the
// two formats cannot drift apart.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace weft::sim::cli {

struct Series {
  std::string label;
  std::vector<double> x;  // > 0, plotted on a log2 axis
  std::vector<double> y;
};

struct PlotSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool x_is_bytes = true;  // tick labels as 1K, 1M, ... instead of numbers
};

// The chart as an SVG document (kPlotWidth x kPlotHeight user units).
std::string RenderSvgPlot(const PlotSpec& spec, const std::vector<Series>& series);
inline constexpr int kPlotWidth = 720, kPlotHeight = 440;

// Why `path` cannot name a plot this weft-sim can write ("" when it can): the extension
// picks the format. Commands check it when parsing --plot, before any simulation runs.
std::string PlotPathProblem(const std::string& path);

// Adds `--plot FILE.svg|FILE.png` to `cmd`, "write WHAT to FILE.svg or FILE.png", with
// PlotPathProblem as its check.
void AddPlotOption(CLI::App* cmd, std::string* path, const std::string& what);

// Writes the chart to `path`, in the format its extension names: ".svg", or ".png" when
// weft-sim was built with librsvg (WEFT_SIM_HAVE_PNG). Any other name, a .png without
// librsvg, or a file that cannot be written: a message on stderr naming the path and the
// cause, false, and no partial file left behind.
bool WritePlot(const std::string& path, const PlotSpec& spec, const std::vector<Series>& series);

}  // namespace weft::sim::cli
