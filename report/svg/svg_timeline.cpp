// The timeline picture (svg_plots.hpp: layout, marks, merged narrow boxes).
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

constexpr double kLanePitch = 28;
constexpr double kLaneBgPad = 2;    // lane background: pitch minus 2 x pad
constexpr double kBoxPad = 4;       // box: pitch minus 2 x pad
constexpr double kBoxCharPx = 5.8;  // at 10 px, inside boxes
constexpr double kMaxLaneNamePx = 200;
constexpr double kMarkBand = 16;    // room above the lanes for mark labels, when there are marks

// One lane's boxes, clipped to the span, in pixels.
struct PxBox {
  double x0;
  double x1;
  std::size_t index;
};

struct LaneCounts {
  std::size_t drawn = 0;
  std::size_t merged = 0;  // narrow boxes drawn as part of a run of two or more
  std::size_t runs = 0;
  std::size_t dropped = 0;
};

// Runs of narrow boxes: extent, count, time per kind, first box.
struct Run {
  double x0 = 0;
  double x1 = 0;
  std::size_t count = 0;
  std::size_t first = 0;
  std::array<double, kBoxKinds> px_by_kind{};
};

class LaneWriter {
 public:
  LaneWriter(std::string& out, const TimelineLane& lane, double x0, double w, double lane_y,
             double span_s)
      : o_(out),
        lane_(lane),
        x0_(x0),
        w_(w),
        span_s_(span_s),
        unit_(time_unit(span_s)),
        y_(num(lane_y + kBoxPad)),
        text_y_(num(lane_y + kLanePitch / 2 + 3.5)) {}

  LaneCounts write() {
    std::vector<PxBox> boxes;
    boxes.reserve(lane_.boxes.size());
    for (std::size_t i = 0; i < lane_.boxes.size(); ++i) {
      const auto& b = lane_.boxes[i];
      if (!std::isfinite(b.start_s) || !std::isfinite(b.end_s) || b.end_s < 0 ||
          b.start_s > span_s_ || b.end_s < b.start_s) {
        ++counts_.dropped;
        continue;
      }
      const double s = std::clamp(b.start_s, 0.0, span_s_);
      const double e = std::clamp(b.end_s, s, span_s_);
      boxes.push_back({px(s), px(e), i});
    }
    std::stable_sort(boxes.begin(), boxes.end(),
                     [](const PxBox& a, const PxBox& b) { return a.x0 < b.x0; });
    Run run;
    for (const PxBox& b : boxes) {
      if (b.x1 - b.x0 >= kMinBoxPx) {
        box_rect(b);
        continue;
      }
      if (run.count > 0 && b.x0 > run.x1 + kMinBoxPx) {
        flush(run);
        run = Run{};
      }
      if (run.count == 0) {
        run.x0 = b.x0;
        run.first = b.index;
      }
      run.x1 = std::max(run.x1, b.x1);
      ++run.count;
      run.px_by_kind[kind_index(lane_.boxes[b.index].kind)] += b.x1 - b.x0;
    }
    if (run.count > 0) flush(run);
    return counts_;
  }

 private:
  double px(double t) const { return x0_ + w_ * t / span_s_; }

  std::string time_range(double s, double e) const {
    return fmt::format("{:.3f}-{:.3f} {}", s * unit_.scale, e * unit_.scale, unit_.name);
  }

  bool room() {
    if (counts_.drawn >= static_cast<std::size_t>(kMaxRectsPerLane)) return false;
    ++counts_.drawn;
    return true;
  }

  void rect(double x0, double x1, BoxKind kind, const std::string& tooltip) {
    o_ += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"k{}\"><title>{}</title>"
        "</rect>\n",
        num(x0), y_, num(x1 - x0), num(kLanePitch - 2 * kBoxPad), kind_index(kind), tooltip);
  }

  void box_rect(const PxBox& pb) {
    if (!room()) {
      ++counts_.dropped;
      return;
    }
    const TimelineBox& b = lane_.boxes[pb.index];
    const std::string_view name =
        b.label.empty() ? kKindStyles[kind_index(b.kind)].name : std::string_view(b.label);
    const double s = std::clamp(b.start_s, 0.0, span_s_);
    const double e = std::clamp(b.end_s, s, span_s_);
    rect(pb.x0, pb.x1, b.kind, fmt::format("{} ({})", escape(name), time_range(s, e)));
    const double width = pb.x1 - pb.x0;
    if (!b.label.empty() && static_cast<double>(char_count(b.label)) * kBoxCharPx + 6 <= width) {
      o_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"{}\">{}</text>\n",
                        num((pb.x0 + pb.x1) / 2), text_y_,
                        kKindStyles[kind_index(b.kind)].white_text ? "tw" : "tb", escape(b.label));
    }
  }

  void flush(const Run& run) {
    if (run.count == 1) {
      box_rect({run.x0, run.x1, run.first});
      return;
    }
    if (!room()) {
      counts_.dropped += run.count;
      return;
    }
    counts_.merged += run.count;
    ++counts_.runs;
    std::size_t kind = 0;
    for (std::size_t k = 1; k < run.px_by_kind.size(); ++k) {
      if (run.px_by_kind[k] > run.px_by_kind[kind]) kind = k;
    }
    const double s = (run.x0 - x0_) / w_ * span_s_;
    const double e = (run.x1 - x0_) / w_ * span_s_;
    rect(run.x0, run.x1, static_cast<BoxKind>(kind),
         fmt::format("{} ops narrower than {} px each ({})", run.count, num(kMinBoxPx),
                     time_range(s, e)));
  }

  std::string& o_;
  const TimelineLane& lane_;
  double x0_;
  double w_;
  double span_s_;
  TimeUnit unit_;
  std::string y_;
  std::string text_y_;
  LaneCounts counts_;
};

}  // namespace

std::string_view box_kind_name(BoxKind kind) {
  return kKindStyles[kind_index(kind)].name;
}
std::string_view box_kind_colour(BoxKind kind) {
  return kKindStyles[kind_index(kind)].fill;
}

namespace {

// Marks over the lanes [top, top + lanes_h]: shade, end lines, label in the band above.
void timeline_marks(std::string& o, const std::vector<TimelineMark>& marks, double left,
                    double plot_w, double top, double lanes_h, double span) {
  const TimeUnit unit = time_unit(span);
  std::vector<std::string> lines_at;  // boundaries drawn once, none at the axis ends
  o += "<g>\n";
  for (const auto& m : marks) {
    if (!std::isfinite(m.start_s) || !std::isfinite(m.end_s)) continue;
    const double s = std::clamp(m.start_s, 0.0, span);
    const double e = std::clamp(m.end_s, s, span);
    if (e <= s) continue;
    const double x0 = left + plot_w * s / span;
    const double x1 = left + plot_w * e / span;
    const std::string tooltip = fmt::format("{} ({:.3f}-{:.3f} {})", escape(m.label),
                                            s * unit.scale, e * unit.scale, unit.name);
    if (m.shaded) {
      o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"shade\">"
                       "<title>{}</title></rect>\n",
                       num(x0), num(top), num(x1 - x0), num(lanes_h), tooltip);
    }
    for (const auto& [t, x] : {std::pair{s, x0}, std::pair{e, x1}}) {
      const std::string at = num(x);
      if (t <= 0 || t >= span ||
          std::find(lines_at.begin(), lines_at.end(), at) != lines_at.end()) {
        continue;
      }
      lines_at.push_back(at);
      o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"mark\"/>\n",
                       at, num(top - kMarkBand + 2), num(top + lanes_h));
    }
    if (static_cast<double>(char_count(m.label)) * kCharPx + 8 <= x1 - x0) {
      o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"mid\"><title>{}</title>{}</text>\n",
                       num((x0 + x1) / 2), num(top - 4), tooltip, escape(m.label));
    }
  }
  o += "</g>\n";
}

}  // namespace

std::string svg_timeline(const std::string& title, const std::vector<TimelineLane>& lanes,
                         double span_s, const std::vector<TimelineMark>& marks) {
  double latest = 0;
  std::array<bool, kBoxKinds> present{};
  std::size_t name_chars = 0;
  for (const auto& lane : lanes) {
    name_chars = std::max(name_chars, char_count(lane.name));
    for (const auto& b : lane.boxes) {
      if (std::isfinite(b.end_s)) latest = std::max(latest, b.end_s);
      present[kind_index(b.kind)] = true;
    }
  }
  const double span = effective_span(span_s, latest);
  const auto max_name_chars = static_cast<std::size_t>(kMaxLaneNamePx / kCharPx);
  const double name_px = static_cast<double>(std::min(name_chars, max_name_chars)) * kCharPx;
  const double left = std::max(60.0, name_px + 20);
  const double plot_w = kWidth - left - kRight;
  const double top = kTop + (marks.empty() ? 0.0 : kMarkBand);
  const double lanes_h = static_cast<double>(std::max<std::size_t>(lanes.size(), 1)) * kLanePitch;
  const double axis_y = top + lanes_h + 4;
  const double legend_y = axis_y + 44;
  const bool any_kind = std::find(present.begin(), present.end(), true) != present.end();
  const double height = legend_y + (any_kind ? 12 : 0) + 16;

  std::string o;
  open_svg(o, height, true);
  o += fmt::format("<!-- timeline: {} lanes, span {:.6f} s -->\n", lanes.size(), span);
  title_text(o, title);

  o += "<g>\n";
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const double y = top + static_cast<double>(i) * kLanePitch;
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"lane\"/>\n",
                     num(left), num(y + kLaneBgPad), num(plot_w), num(kLanePitch - 2 * kLaneBgPad));
    o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"name\">{}</text>\n", num(left - 8),
                     num(y + kLanePitch / 2 + 4), escape(lanes[i].name, max_name_chars));
  }
  if (lanes.empty()) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"mid\">(no lanes)</text>\n",
                     num(left + plot_w / 2), num(top + kLanePitch / 2 + 4));
  }
  o += "</g>\n";
  time_axis(o, left, plot_w, axis_y, top, "grid", span);

  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const double y = top + static_cast<double>(i) * kLanePitch;
    std::string body;
    const LaneCounts c = LaneWriter(body, lanes[i], left, plot_w, y, span).write();
    o += fmt::format(
        "<!-- lane {}: {} boxes, {} rects, {} narrow boxes merged into {} rects, {} dropped -->\n",
        i, lanes[i].boxes.size(), c.drawn, c.merged, c.runs, c.dropped);
    o += "<g>\n";
    o += body;
    o += "</g>\n";
  }

  if (!marks.empty()) timeline_marks(o, marks, left, plot_w, top, lanes_h, span);

  std::vector<LegendEntry> entries;
  for (std::size_t k = 0; k < present.size(); ++k) {
    if (!present[k]) continue;
    entries.push_back({fmt::format("<rect x=\"{{x}}\" y=\"{{y}}\" width=\"12\" height=\"12\" "
                                   "class=\"k{}\"/>\n",
                                   k),
                       std::string(kKindStyles[k].name)});
  }
  legend(o, entries, left, legend_y);
  o += "</svg>\n";
  return o;
}

}  // namespace parasim::cli
