// A minimal SVG line plot (log2 x axis, linear y), written directly: no plotting
// dependency for one chart type.
#pragma once

#include <string>
#include <vector>

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

// Returns false (and leaves no partial file behind) when `path` cannot be written, or
// does not end in ".svg" (SVG is the only format: a .png name would get SVG bytes, so it
// is refused with a message on stderr instead).
bool WriteSvgPlot(const std::string& path, const PlotSpec& spec, const std::vector<Series>& series);

}  // namespace weft::sim::cli
