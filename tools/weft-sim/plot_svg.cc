#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plot.h"
#include "common/byte_size.h"

namespace weft::sim::cli {
namespace {

constexpr double kW = kPlotWidth, kH = kPlotHeight, kLeft = 70, kRight = 150, kTop = 40,
                 kBottom = 50;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string RenderSvgPlot(const PlotSpec& spec, const std::vector<Series>& series) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      xmin = std::min(xmin, std::log2(s.x[i]));
      xmax = std::max(xmax, std::log2(s.x[i]));
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (!(xmax >= xmin)) xmin = xmax = 0;
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  ymax *= 1.1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (std::log2(x) - xmin) / (xmax - xmin) * pw; };
  auto py = [&](double y) { return kTop + ph - y / ymax * ph; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"22\" font-size=\"15\">{}</text>\n",
      kW, kH, kLeft, Escape(spec.title));
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      kLeft, kTop, pw, ph);
  // x ticks at every other power of two.
  const int step = (xmax - xmin) > 12 ? 2 : 1;
  for (int e = static_cast<int>(std::ceil(xmin)); e <= static_cast<int>(xmax); e += step) {
    const double v = std::ldexp(1.0, e);
    const std::string label =
        spec.x_is_bytes ? tools::FormatByteSize(static_cast<size_t>(v)) : fmt::format("{:g}", v);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(v), kTop, kTop + ph, kTop + ph + 16, label);
  }
  for (int i = 0; i <= 5; ++i) {
    const double v = ymax * i / 5;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.3g}</text>\n",
        kLeft, py(v), kLeft + pw, kLeft - 6, py(v) + 4, v);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + pw / 2,
                     kH - 12, Escape(spec.x_label));
  svg += fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 16 {0})\">{1}</text>\n",
      kTop + ph / 2, Escape(spec.y_label));
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const char* color = kColors[k % 6];
    std::string pts;
    for (size_t i = 0; i < s.x.size(); ++i)
      pts += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       color, pts);
    for (size_t i = 0; i < s.x.size(); ++i) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n",
                         px(s.x[i]), py(s.y[i]), color);
    }
    const double ly = kTop + 14 + 18 * k;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/><text x=\"{4}\" y=\"{5}\">{6}</text>\n",
        kLeft + pw + 10, ly, kLeft + pw + 30, color, kLeft + pw + 35, ly + 4, Escape(s.label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace weft::sim::cli
