// Rasterises an SVG document to a PNG file with librsvg (cairo underneath). Built only
// when librsvg is found (WEFT_SIM_HAVE_PNG); plot_file.cc refuses .png names otherwise.
#pragma once

#include <string>

namespace weft::sim::cli {

// Renders `svg` (width x height user units) at `scale` pixels per unit into `path`.
// Returns "" on success, else why not (librsvg's or cairo's own message).
std::string SvgToPng(const std::string& svg, int width, int height, double scale,
                     const std::string& path);

}  // namespace weft::sim::cli
