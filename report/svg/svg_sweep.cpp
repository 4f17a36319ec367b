#include "report/svg/svg_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/svg/svg_plots.hpp"

namespace parasim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                    "#56B4E9", "#F0E442", "#000000"};


}  // namespace

std::string svg_sweep(const std::string& title, const std::vector<SweepSeries>& series,
                      double capacity_bytes) {
  const double width = 900, height = 520, left = 80, right = 20, top = 50, bottom = 110;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double x_lo = 1e300, x_hi = 0, y_hi = capacity_bytes > 0 ? capacity_bytes : 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_hi = std::max(y_hi, y);
    }
  }
  if (x_hi <= 0) {
    x_lo = 1;
    x_hi = 2;
  }
  if (x_hi <= x_lo) x_hi = x_lo * 2;
  const double y_top = std::max(1.0, std::ceil(y_hi * 1.05 / kGiB / 10.0) * 10.0);  // GiB
  auto px = [&](double x) {
    return left + plot_w * (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo));
  };
  auto py = [&](double bytes) { return top + plot_h * (1.0 - bytes / kGiB / y_top); };
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      width, height, width / 2, svg_escape(title));
  for (int i = 0; i <= 5; ++i) {  // y grid in GiB
    const double v = y_top * i / 5.0;
    const double y = py(v * kGiB);
    o += fmt::format("<line x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#ddd\"/>\n"
                     "<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"end\">{:.0f}</text>\n",
                     left, y, left + plot_w, y, left - 6, y + 4, v);
  }
  o += fmt::format("<text x=\"20\" y=\"{0:.2f}\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
                   "{0:.2f})\">peak memory per GPU (GiB)</text>\n",
                   top + plot_h / 2);
  for (double x = x_lo; x <= x_hi * 1.0001; x *= 2) {  // x ticks at powers of two
    o += fmt::format("<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
                     "<text x=\"{0:.2f}\" y=\"{3}\" text-anchor=\"middle\">{4:.0f}K</text>\n",
                     px(x), top, top + plot_h, top + plot_h + 16, x / 1024.0);
  }
  o += fmt::format("<text x=\"{:.2f}\" y=\"{}\" text-anchor=\"middle\">sequence length "
                   "(tokens)</text>\n",
                   left + plot_w / 2, top + plot_h + 34);
  if (capacity_bytes > 0) {
    o += fmt::format("<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"#D55E00\" "
                     "stroke-dasharray=\"6 4\"/>\n<text x=\"{2}\" y=\"{3:.2f}\" "
                     "text-anchor=\"end\">HBM {4:.1f} GiB</text>\n",
                     left, py(capacity_bytes), left + plot_w, py(capacity_bytes) - 5,
                     capacity_bytes / kGiB);
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % 8];
    std::string points;
    for (const auto& [x, y] : series[i].points) {
      points += fmt::format("{}{:.2f},{:.2f}", points.empty() ? "" : " ", px(x), py(y));
    }
    o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                     colour, points);
    for (const auto& [x, y] : series[i].points) {
      o += fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3.5\" fill=\"{}\"><title>{} at "
                       "{:.0f}K: {:.1f} GiB</title></circle>\n",
                       px(x), py(y), colour, svg_escape(series[i].name), x / 1024.0, y / kGiB);
    }
    const double lx = left + 150.0 * static_cast<double>(i % 5);
    const double ly = top + plot_h + 60 + 20.0 * static_cast<double>(i / 5);
    o += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"14\" height=\"4\" fill=\"{}\"/>"
                     "<text x=\"{:.2f}\" y=\"{:.2f}\">{}</text>\n",
                     lx, ly - 4, colour, lx + 20, ly, svg_escape(series[i].name));
  }
  o += "</svg>\n";
  return o;
}

}  // namespace parasim::cli
