#pragma once
// parasim::cli SVG plots — a per-stage timeline (svg_timeline.cpp) and a per-stage memory curve
// (svg_memory.cpp), and svg_escape (svg_canvas.cpp), written as plain SVG 1.1 text with no
// library. Output is deterministic byte for byte: every coordinate is printed
// with at most two decimals (trailing zeros trimmed), element order follows the input, and no
// clock, locale or address enters the text.
//
// Timeline layout: a white canvas, a title, one lane per entry of `lanes` (name at the left, a
// light grey lane background so idle time reads as gaps), a time axis in ms (span below 1 s) or s
// with gridlines, and a legend of the box kinds present. Marks (optional) call out stretches of
// time across all lanes: dashed lines (class "mark") at both ends, the label in a band above the
// lanes when it fits (always in a <title>), and, for a shaded mark, a translucent white rect
// (class "shade") over the boxes. The <rect> elements are exactly
//   1 (canvas) + lanes.size() (lane backgrounds) + drawn boxes + shaded marks drawn + legend
// swatches (one per kind among the input boxes, dropped ones included),
// where a box at least kMinBoxPx wide is drawn as its own rect, and boxes narrower than that are
// merged with their narrow neighbours (gaps under kMinBoxPx) into one rect per run (a run of one
// box is drawn as that box). Per lane, an XML comment counts the boxes, the merged ones and any
// dropped (outside [0, span], not finite, or past kMaxRectsPerLane). Each drawn box has a <title>
// tooltip (its label and time span); the label is also written inside the box when it fits.
//
// Memory layout: a title, a y axis in GiB from 0 with gridlines, the time axis, one step-shaped
// <path> per series with at least one point (the value holds until the next point and the last
// one to the end of the span), an optional dashed capacity line (class "capacity"), and a legend.
// Points that fall within half a pixel of each other are folded into one column, keeping its
// vertical extent, so long series stay small.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parasim::cli {

enum class BoxKind {
  kForward,
  kBackward,
  kWeightGrad,
  kOptimizer,
  kComm,          // communication of no kind below
  kTensorComm,    // tensor-parallel collectives (and a placement's own: BOOST's, TSP's rounds)
  kPipelineComm,  // pipeline transfers
  kDataComm,      // data-parallel reductions and gathers (ZeRO)
  kContextComm,   // context-parallel K/V passing
  kExpertComm,    // the experts' dispatch and combine (ep, etp)
  kOther
};
inline constexpr int kBoxKinds = 11;

// Legend name ("forward", ..., "communication", "other") and fill colour ("#RRGGBB", Okabe-Ito).
std::string_view box_kind_name(BoxKind kind);
std::string_view box_kind_colour(BoxKind kind);

// Narrowest box drawn on its own, in pixels, and the most rects drawn in one lane.
inline constexpr double kMinBoxPx = 0.25;
inline constexpr int kMaxRectsPerLane = 10000;

struct TimelineBox {
  double start_s;
  double end_s;
  BoxKind kind;
  std::string label;  // shown in a <title> tooltip, and inside the box when it fits
};

struct TimelineLane {
  std::string name;
  std::vector<TimelineBox> boxes;
};

// A stretch of time called out on the timeline (the warm-up an asynchronous schedule's figures
// exclude, the steady-state window they use). Clipped to the span; a mark that is empty after
// clipping or not finite is not drawn.
struct TimelineMark {
  double start_s;
  double end_s;
  std::string label;
  bool shaded;  // true: a stretch the figures leave out, faded
};

// span_s is the length of the time axis; when it is not positive the latest box end is used
// (1 ms when there is none). Boxes are clipped to [0, span].
std::string svg_timeline(const std::string& title, const std::vector<TimelineLane>& lanes,
                         double span_s, const std::vector<TimelineMark>& marks = {});

struct MemorySeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (time s, bytes), a step function
};

// capacity_bytes <= 0 draws no capacity line. span_s as for svg_timeline (latest point time).
std::string svg_memory(const std::string& title, const std::vector<MemorySeries>& series,
                       double span_s, double capacity_bytes);

// Text as SVG/XML character data or attribute value (markup escaped, characters XML does not
// allow replaced by '?'); for other SVG writers of parasim.
std::string svg_escape(std::string_view text);

}  // namespace parasim::cli
