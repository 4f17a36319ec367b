// The memory picture (svg_plots.hpp: a step-shaped path per series, the capacity line).
#include "report/svg/svg_plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "report/svg/svg_canvas.hpp"

namespace parasim::cli {
namespace {

using namespace svg;  // the shared canvas (svg_canvas.hpp)

// Series colours for the memory plot: Okabe-Ito, yellow last (weakest on white); the dash pattern
// changes each time the palette wraps around.
constexpr std::array<std::string_view, 8> kSeriesColours{
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"};
constexpr std::array<std::string_view, 4> kSeriesDashes{"", "6,3", "2,2", "8,3,2,3"};

// The step path of one series: "M x y" then H/V commands; points within half a pixel of the
// current column fold into it, keeping its vertical extent and its last value.
std::string step_path(std::vector<std::pair<double, double>> points, double x0, double w,
                      double span_s, double y_base, double h, double top_gib) {
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto px = [&](double t) { return x0 + w * std::clamp(t, 0.0, span_s) / span_s; };
  const auto py = [&](double bytes) {
    return y_base - h * std::clamp(bytes / kGiB, 0.0, top_gib) / top_gib;
  };
  std::string d;
  double col_x = 0;
  std::string pen;  // the y the pen is at, formatted
  double lo = 0;
  double hi = 0;
  double last = 0;
  const auto flush = [&] {
    // Visit the column's extremes and end at its last value, skipping repeats.
    std::vector<double> ys;
    if (last == hi) {
      ys = {lo, hi};
    } else if (last == lo) {
      ys = {hi, lo};
    } else {
      ys = {lo, hi, last};
    }
    for (double y : ys) {
      const std::string s = num(y);
      if (s == pen) continue;
      d += 'V';
      d += s;
      pen = s;
    }
  };
  bool started = false;
  for (const auto& [t, bytes] : points) {
    if (!std::isfinite(t) || !std::isfinite(bytes)) continue;
    const double x = px(t);
    const double y = py(bytes);
    if (!started) {
      started = true;
      col_x = x;
      pen = num(y);
      d = fmt::format("M{} {}", num(x), pen);
      lo = hi = last = y;
      continue;
    }
    if (x >= col_x + 0.5) {
      flush();
      col_x = x;
      d += 'H';
      d += num(x);
      lo = hi = last;
    }
    lo = std::min(lo, y);
    hi = std::max(hi, y);
    last = y;
  }
  if (!started) return d;
  flush();
  const double end = x0 + w;
  if (end > col_x) {
    d += 'H';
    d += num(end);
  }
  return d;
}

}  // namespace

std::string svg_memory(const std::string& title, const std::vector<MemorySeries>& series,
                       double span_s, double capacity_bytes) {
  double latest = 0;
  double peak = 0;
  for (const auto& s : series) {
    for (const auto& [t, bytes] : s.points) {
      if (std::isfinite(t)) latest = std::max(latest, t);
      if (std::isfinite(bytes)) peak = std::max(peak, bytes);
    }
  }
  const double span = effective_span(span_s, latest);
  const bool capacity = capacity_bytes > 0 && std::isfinite(capacity_bytes);
  double top_gib = std::max(peak, capacity ? capacity_bytes : 0.0) / kGiB;
  if (!(top_gib > 0)) top_gib = 1;
  const Ticks yt = nice_ticks(top_gib * 1.05, 6);
  top_gib = yt.step * std::ceil(top_gib * 1.05 / yt.step);

  const double left = 70;
  const double plot_w = kWidth - left - kRight;
  const double plot_h = 320;
  const double base_y = kTop + plot_h;
  const double legend_y = base_y + 44;

  std::vector<LegendEntry> entries;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto colour = kSeriesColours[i % kSeriesColours.size()];
    const auto dash = kSeriesDashes[std::min(i / kSeriesColours.size(), kSeriesDashes.size() - 1)];
    const std::string dash_attr = dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash);
    entries.push_back({fmt::format("<line x1=\"{{x}}\" y1=\"{{yc}}\" x2=\"{{x2}}\" y2=\"{{yc}}\" "
                                   "stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                                   colour, dash_attr),
                       series[i].name});
  }
  // Legend rows are counted on a scratch string first so that the height is known up front.
  std::string legend_text;
  const int rows = legend(legend_text, entries, left, legend_y);
  const double height = legend_y + (rows > 0 ? 18.0 * rows - 6 : 0) + 16;

  std::string o;
  open_svg(o, height, false);
  o += fmt::format("<!-- memory: {} series, span {:.6f} s, axis top {:.6f} GiB -->\n",
                   series.size(), span, top_gib);
  title_text(o, title);

  // Y axis: gridlines, ticks and labels in GiB.
  o += "<g>\n";
  for (int i = 0; i <= 1000; ++i) {
    const double v = yt.step * i;
    if (v > top_gib * (1 + 1e-9)) break;
    const double y = base_y - plot_h * v / top_gib;
    if (i > 0) {
      o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"hgrid\"/>\n",
                       num(left), num(y), num(left + plot_w), num(y));
    }
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n",
                     num(left - 4), num(y), num(left), num(y));
    o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"end\">{:.{}f}</text>\n", num(left - 7),
                     num(y + 4), v, yt.decimals);
  }
  o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"axis\"/>\n",
                   num(left), num(kTop), num(base_y));
  o += fmt::format(
      "<text x=\"18\" y=\"{0}\" class=\"mid\" transform=\"rotate(-90 18 {0})\">memory (GiB)"
      "</text>\n",
      num(kTop + plot_h / 2));
  o += "</g>\n";
  time_axis(o, left, plot_w, base_y, base_y, "grid", span);

  if (capacity) {
    const double y = base_y - plot_h * (capacity_bytes / kGiB) / top_gib;
    o += "<g>\n";
    o += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"capacity\" "
        "stroke-dasharray=\"6,4\"/>\n",
        num(left), num(y), num(left + plot_w), num(y));
    o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"end\">capacity {:.1f} GiB</text>\n",
                     num(left + plot_w - 4), num(y - 5), capacity_bytes / kGiB);
    o += "</g>\n";
  }

  bool any_points = false;
  o += "<g>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string d = step_path(series[i].points, left, plot_w, span, base_y, plot_h, top_gib);
    if (d.empty()) continue;
    any_points = true;
    double series_peak = 0;
    for (const auto& p : series[i].points) {
      if (std::isfinite(p.second)) series_peak = std::max(series_peak, p.second);
    }
    const auto colour = kSeriesColours[i % kSeriesColours.size()];
    const auto dash = kSeriesDashes[std::min(i / kSeriesColours.size(), kSeriesDashes.size() - 1)];
    o += fmt::format(
        "<path d=\"{}\" class=\"series\" stroke=\"{}\"{}><title>{}: peak {:.2f} GiB"
        "</title></path>\n",
        d, colour, dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash),
        escape(series[i].name), series_peak / kGiB);
  }
  if (!any_points) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"mid\">(no data)</text>\n",
                     num(left + plot_w / 2), num(kTop + plot_h / 2));
  }
  o += "</g>\n";
  o += legend_text;
  o += "</svg>\n";
  return o;
}

}  // namespace parasim::cli
