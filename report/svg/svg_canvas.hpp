#pragma once
// parasim::cli::svg — the pieces the pictures of report/svg/ share (svg_timeline.cpp,
// svg_memory.cpp, svg_sweep.cpp; internal to report/): page constants, box-kind styles,
// coordinates and text as SVG writes them, the style block, the time axis and the legend.
// Deterministic: no clock, locale or address enters the text.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/svg/svg_plots.hpp"

namespace parasim::cli::svg {

constexpr double kWidth = 1200;  // px, every picture
constexpr double kRight = 24;    // right margin, px
constexpr double kTop = 44;      // top of the plot area, below the title, px
constexpr double kCharPx = 6.4;  // estimated advance of one character at 11 px
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct KindStyle {
  std::string_view name;
  std::string_view fill;
  bool white_text;
};

// Okabe-Ito: blue, bluish green, orange, vermillion, grey, reddish purple for the compute kinds;
// the communication kinds in sky blue, yellow, black-grey, a dark purple and a dark green (Tol's),
// distinct from them.
constexpr std::array<KindStyle, kBoxKinds> kKindStyles{{
    {"forward", "#0072B2", true},
    {"backward", "#009E73", false},
    {"weight gradient", "#E69F00", false},
    {"optimizer", "#D55E00", false},
    {"communication", "#999999", false},
    {"tp communication", "#56B4E9", false},
    {"pp transfer", "#F0E442", false},
    {"dp communication", "#555555", true},
    {"cp communication", "#882255", true},
    {"ep communication", "#117733", true},
    {"other", "#CC79A7", false},
}};

// Index into kKindStyles (an out-of-range kind is "other").
std::size_t kind_index(BoxKind kind);

// A coordinate with at most two decimals, trailing zeros trimmed; never "-0", never "nan".
std::string num(double v);

// Text as XML character data or attribute value: markup characters escaped, characters XML 1.0
// does not allow (control characters, invalid UTF-8) replaced by '?'. At most max_chars
// characters are kept; a cut text ends in "...".
std::string escape(std::string_view text, std::size_t max_chars = std::string::npos);

// Characters in UTF-8 text (bytes that do not continue a sequence).
std::size_t char_count(std::string_view text);

// A 1-2-5 step that cuts `range` into about `target` intervals; decimals it needs.
struct Ticks {
  double step = 0;
  int decimals = 0;
};
Ticks nice_ticks(double range, double target);

// The time axis unit: ms below one second, else s.
struct TimeUnit {
  double scale;
  std::string_view name;
};
TimeUnit time_unit(double span_s);

// The <style> block; with_kinds adds the box-kind fills, box text and the timeline marks.
std::string style_block(bool with_kinds);
// The <svg> element, the style block and the white canvas rect.
void open_svg(std::string& o, double height, bool with_kinds);
void title_text(std::string& o, const std::string& title);

// Ticks, labels and the unit label of a time axis along y = axis_y from x0 (t = 0) to x0 + w
// (t = span); gridlines from grid_top down to the axis when grid_top < axis_y.
void time_axis(std::string& o, double x0, double w, double axis_y, double grid_top,
               std::string_view grid_class, double span_s);

// The span to draw: span_s when positive, else the latest time seen, else 1 ms.
double effective_span(double span_s, double latest_s);

// Legend entries flow left to right from x0, wrapping at the right margin. Returns the rows used.
struct LegendEntry {
  std::string swatch;  // the element(s) drawn at (x, y): a format with {x}, {y}, {x2}, {yc}
  std::string label;
};
int legend(std::string& o, const std::vector<LegendEntry>& entries, double x0, double y0);

}  // namespace parasim::cli::svg
