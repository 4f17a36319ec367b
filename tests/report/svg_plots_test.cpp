// SVG plots: structure (tags balanced, text escaped), one rect per box plus the documented
// backgrounds, narrow-box merging, size bounds, determinism and the empty cases.
#include "report/svg/svg_plots.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "../support/test_support.hpp"

namespace {

using parasim::cli::BoxKind;
using parasim::cli::MemorySeries;
using parasim::cli::svg_memory;
using parasim::cli::svg_timeline;
using parasim::cli::TimelineBox;
using parasim::cli::TimelineLane;
using parasim::cli::TimelineMark;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// A small XML check: every element opened is closed in order, comments are closed, no '<' or
// stray '&' in text or attribute values. Returns the first problem, or "" when there is none.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  const auto entity_ok = [&](std::size_t i) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
      if (s.compare(i, std::string(e).size(), e) == 0) return true;
    }
    return false;
  };
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '&' && !entity_ok(i)) return "unescaped & at " + std::to_string(i);
    if (s[i] == '>') return "stray > at " + std::to_string(i);
    if (s[i] != '<') {
      ++i;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const auto end = s.find("-->", i + 4);
      if (end == std::string::npos) return "unclosed comment";
      if (s.substr(i + 4, end - i - 4).find("--") != std::string::npos) return "-- in comment";
      i = end + 3;
      continue;
    }
    // A tag: find its end, refusing '<' inside and checking '&' in attribute values.
    std::size_t j = i + 1;
    bool in_quote = false;
    for (; j < s.size() && (in_quote || s[j] != '>'); ++j) {
      if (s[j] == '"') in_quote = !in_quote;
      if (s[j] == '<') return "< inside a tag at " + std::to_string(j);
      if (s[j] == '&' && !entity_ok(j)) return "unescaped & in a tag at " + std::to_string(j);
    }
    if (j == s.size()) return "unterminated tag";
    const std::string tag = s.substr(i + 1, j - i - 1);
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1);
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
    i = j + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back();
  return "";
}

void check_document(const std::string& svg) {
  REQUIRE(svg.size() > 20);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(svg.find("viewBox=\"0 0 ") != std::string::npos);
  CHECK(svg.find("width=\"1200\"") != std::string::npos);
  CHECK(xml_problem(svg) == "");
  CHECK(count(svg, "<g>") == count(svg, "</g>"));
  CHECK(count(svg, "<title>") == count(svg, "</title>"));
  CHECK(count(svg, "<text") == count(svg, "</text>"));
  CHECK(count(svg, "<svg") == 1);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}

TimelineBox box(double s, double e, BoxKind k, std::string label = "") {
  return TimelineBox{s, e, k, std::move(label)};
}

// Two stages of a small 1F1B-like schedule over 10 ms, with a gap (idle) in each lane.
std::vector<TimelineLane> small_lanes() {
  return {
      {"stage 0",
       {box(0.000, 0.002, BoxKind::kForward, "F0"), box(0.002, 0.004, BoxKind::kForward, "F1"),
        box(0.006, 0.008, BoxKind::kBackward, "B0"), box(0.008, 0.009, BoxKind::kWeightGrad, "W0"),
        box(0.009, 0.010, BoxKind::kOptimizer, "opt")}},
      {"stage 1",
       {box(0.002, 0.004, BoxKind::kForward, "F0"), box(0.004, 0.006, BoxKind::kBackward, "B0"),
        box(0.0065, 0.0075, BoxKind::kComm, "send")}},
  };
}

}  // namespace

TEST_CASE("svg timeline: one rect per box plus canvas, lane backgrounds and legend swatches") {
  const auto lanes = small_lanes();
  const std::string svg = svg_timeline("1F1B, 2 stages", lanes, 0.010);
  check_document(svg);
  // 1 canvas + 2 lane backgrounds + 8 boxes + 5 kinds present in the legend.
  CHECK(count(svg, "<rect") == 1 + 2 + 8 + 5);
  CHECK(count(svg, "class=\"lane\"") == 2);
  CHECK(count(svg, "<title>") == 8);  // one tooltip per box
  CHECK(svg.find("time (ms)") != std::string::npos);
  CHECK(svg.find(">stage 0</text>") != std::string::npos);
  CHECK(svg.find(">forward</text>") != std::string::npos);
  CHECK(svg.find(">other</text>") == std::string::npos);  // absent kinds stay out of the legend
  CHECK(svg.find("<title>F0 (0.000-2.000 ms)</title>") != std::string::npos);
  CHECK(svg.find(">B0</text>") != std::string::npos);  // 2 ms = 100+ px: the label fits
  CHECK(svg.find("<!-- lane 0: 5 boxes, 5 rects, 0 narrow boxes merged into 0 rects, 0 dropped") !=
        std::string::npos);
}

TEST_CASE("svg timeline: marks shade what the figures exclude and name each stretch") {
  const auto lanes = small_lanes();
  const std::vector<TimelineMark> marks{{0.0, 0.004, "warm-up: 2 batches, excluded", true},
                                        {0.004, 0.009, "steady state: 3 batches", false},
                                        {0.009, 0.010, "x", true},
                                        {0.011, 0.012, "past the span", true},
                                        {std::nan(""), 0.002, "not finite", true}};
  const std::string svg = svg_timeline("async", lanes, 0.010, marks);
  check_document(svg);
  // 1 canvas + 2 lanes + 8 boxes + 2 shaded marks inside the span + 5 legend swatches.
  CHECK(count(svg, "<rect") == 1 + 2 + 8 + 2 + 5);
  CHECK(count(svg, "class=\"shade\"") == 2);
  // Boundaries inside the span, each drawn once: 4 ms and 9 ms.
  CHECK(count(svg, "class=\"mark\"/>") == 2);
  CHECK(svg.find("<title>warm-up: 2 batches, excluded (0.000-4.000 ms)</title>") != std::string::npos);
  CHECK(svg.find(">steady state: 3 batches</text>") != std::string::npos);
  CHECK(svg.find("past the span") == std::string::npos);
  CHECK(svg.find("not finite") == std::string::npos);
  // The lanes move down to leave room for the labels; without marks nothing changes.
  CHECK(svg_timeline("async", lanes, 0.010, {}) == svg_timeline("async", lanes, 0.010));
  CHECK(svg_timeline("async", lanes, 0.010).find("class=\"shade\"") == std::string::npos);
}

TEST_CASE("svg timeline: seconds on the axis for spans of a second or more") {
  const std::string svg = svg_timeline("long", {{"s", {box(0, 2.5, BoxKind::kForward, "F")}}}, 3.0);
  check_document(svg);
  CHECK(svg.find("time (s)") != std::string::npos);
  CHECK(svg.find(">2.5</text>") != std::string::npos);  // 0.5 s ticks
}

TEST_CASE("svg timeline: colours differ per kind and each kind present is drawn with its own") {
  std::set<std::string> colours;
  std::vector<TimelineBox> boxes;
  for (int k = 0; k < parasim::cli::kBoxKinds; ++k) {
    const auto kind = static_cast<BoxKind>(k);
    colours.insert(std::string(parasim::cli::box_kind_colour(kind)));
    CHECK(!parasim::cli::box_kind_name(kind).empty());
    boxes.push_back(box(k * 0.1, k * 0.1 + 0.05, kind, "op"));
  }
  CHECK(colours.size() == static_cast<std::size_t>(parasim::cli::kBoxKinds));
  const std::string svg = svg_timeline("kinds", {{"lane", boxes}}, 0.1 * parasim::cli::kBoxKinds);
  check_document(svg);
  for (int k = 0; k < parasim::cli::kBoxKinds; ++k) {
    const auto kind = static_cast<BoxKind>(k);
    CHECK(svg.find(std::string(parasim::cli::box_kind_colour(kind))) != std::string::npos);
    // The box and its legend swatch.
    CHECK(count(svg, "class=\"k" + std::to_string(k) + "\"") == 2);
  }
  CHECK(parasim::cli::box_kind_colour(BoxKind::kForward) == "#0072B2");
  CHECK(parasim::cli::box_kind_colour(BoxKind::kComm) == "#999999");
}

TEST_CASE("svg timeline: markup characters in labels, lane names and title are escaped") {
  const std::string nasty = "a<&>\"b'";
  const std::string svg =
      svg_timeline(nasty, {{nasty, {box(0, 0.005, BoxKind::kForward, nasty)}}}, 0.01);
  check_document(svg);
  CHECK(svg.find("<&>") == std::string::npos);
  CHECK(count(svg, "a&lt;&amp;&gt;&quot;b&apos;") == 4);  // title, lane name, tooltip, box text
  // Control characters and invalid UTF-8 become '?'; valid UTF-8 passes through.
  const std::string odd = std::string("x\x01y\xff") + "\xc2\xb5s";
  const std::string svg2 = svg_timeline(odd, {}, 1.0);
  check_document(svg2);
  CHECK(svg2.find("x?y?\xc2\xb5s") != std::string::npos);
}

TEST_CASE("svg timeline: long lane names are cut with an ellipsis") {
  const std::string name(100, 'n');
  const std::string svg = svg_timeline("t", {{name, {}}}, 1.0);
  check_document(svg);
  CHECK(svg.find(name) == std::string::npos);
  CHECK(svg.find("nnn...</text>") != std::string::npos);
}

TEST_CASE("svg timeline: the same input gives the same bytes") {
  const auto lanes = small_lanes();
  CHECK(svg_timeline("t", lanes, 0.01) == svg_timeline("t", lanes, 0.01));
  const std::vector<MemorySeries> series{{"s0", {{0, 1e9}, {0.5, 3e9}, {0.8, 2e9}}}};
  CHECK(svg_memory("m", series, 1, 8e9) == svg_memory("m", series, 1, 8e9));
}

TEST_CASE("svg timeline: empty input") {
  SUBCASE("no lanes, span 0") {
    const std::string svg = svg_timeline("", {}, 0);
    check_document(svg);
    CHECK(count(svg, "<rect") == 1);  // the canvas only
    CHECK(svg.find("(no lanes)") != std::string::npos);
  }
  SUBCASE("lanes without boxes") {
    const std::string svg = svg_timeline("idle", {{"a", {}}, {"b", {}}}, 0);
    check_document(svg);
    CHECK(count(svg, "<rect") == 1 + 2);
  }
  SUBCASE("span 0 takes the latest box end") {
    const std::string svg = svg_timeline("t", small_lanes(), 0);
    check_document(svg);
    CHECK(svg == svg_timeline("t", small_lanes(), 0.010));
  }
  SUBCASE("negative or not finite span and times") {
    const std::string svg =
        svg_timeline("t",
                     {{"a",
                       {box(-1, 0.5, BoxKind::kOther), box(0.1, 0.05, BoxKind::kOther),
                        box(std::nan(""), 1, BoxKind::kOther), box(2, 3, BoxKind::kOther)}}},
                     -1);
    check_document(svg);
    // Span from the latest end (3 s); the first box is clipped at 0; the backwards box and the
    // NaN one are dropped.
    CHECK(svg.find("2 rects, 0 narrow boxes merged into 0 rects, 2 dropped") != std::string::npos);
  }
}

TEST_CASE("svg timeline: boxes are clipped to the span; those past it are dropped") {
  const std::string svg = svg_timeline(
      "clip", {{"a", {box(0.5, 2, BoxKind::kForward, "F"), box(1.5, 2, BoxKind::kBackward)}}}, 1.0);
  check_document(svg);
  CHECK(count(svg, "<rect") == 1 + 1 + 1 + 2);
  CHECK(svg.find("1 rects, 0 narrow boxes merged into 0 rects, 1 dropped") != std::string::npos);
}

TEST_CASE("svg timeline: narrow boxes merge into runs, counted in a comment") {
  // 100k back-to-back ops of 10 us in 1 s: far below 0.25 px each, one contiguous run.
  std::vector<TimelineBox> boxes;
  for (int i = 0; i < 100000; ++i) {
    boxes.push_back(box(i * 1e-5, (i + 1) * 1e-5, i % 3 == 0 ? BoxKind::kComm : BoxKind::kForward,
                        "op " + std::to_string(i)));
  }
  // And one wide box on top plus one isolated narrow box far from the run, drawn alone.
  boxes.push_back(box(0.2, 0.4, BoxKind::kOptimizer, "wide"));
  std::vector<TimelineLane> lanes{{"busy", boxes},
                                  {"sparse", {box(0.5, 0.50001, BoxKind::kBackward, "tiny")}}};
  const std::string svg = svg_timeline("merge", lanes, 1.0);
  check_document(svg);
  CHECK(svg.find("<!-- lane 0: 100001 boxes, 2 rects, 100000 narrow boxes merged into 1 rects, "
                 "0 dropped") != std::string::npos);
  CHECK(svg.find("<!-- lane 1: 1 boxes, 1 rects, 0 narrow boxes merged into 0 rects, 0 dropped") !=
        std::string::npos);
  CHECK(svg.find("<title>100000 ops narrower than 0.25 px each (0.000-1.000 s)</title>") !=
        std::string::npos);
  CHECK(svg.find("<title>tiny (0.500-0.500 s)</title>") != std::string::npos);
  // 1 canvas + 2 lanes + 3 drawn + 4 kinds present.
  CHECK(count(svg, "<rect") == 1 + 2 + 3 + 4);
  // The run takes the dominant kind: forward (2/3 of the time).
  CHECK(svg.find("class=\"k0\"><title>100000 ops") != std::string::npos);
  CHECK(svg.size() < 20000);
}

TEST_CASE("svg timeline: 16 lanes x 2000 boxes stays within a few MB") {
  std::vector<TimelineLane> lanes;
  const double span = 2.0;
  for (int s = 0; s < 16; ++s) {
    TimelineLane lane{"stage " + std::to_string(s), {}};
    for (int i = 0; i < 2000; ++i) {
      const double t = span * i / 2000.0;
      const auto kind = static_cast<BoxKind>(i % 5);
      lane.boxes.push_back(box(t, t + span / 2000.0 * 0.8, kind,
                               "mb " + std::to_string(i) + " layer " + std::to_string(s)));
    }
    lanes.push_back(std::move(lane));
  }
  const std::string svg = svg_timeline("16 x 2000", lanes, span);
  check_document(svg);
  // Each box is 0.8 x 1105/2000 px = 0.44 px wide: drawn on its own.
  CHECK(count(svg, "<rect") == 1 + 16 + 16 * 2000 + 5);
  MESSAGE("16 lanes x 2000 boxes: " << svg.size() << " bytes");
  CHECK(svg.size() < 5'000'000);
}

TEST_CASE("svg memory: one step path per series, capacity line when given") {
  const std::vector<MemorySeries> series{
      {"stage 0", {{0, 10e9}, {0.2, 30e9}, {0.6, 20e9}}},
      {"stage 1", {{0.1, 5e9}, {0.3, 25e9}}},
      {"stage <2>", {{0, 1e9}}},
  };
  const std::string svg = svg_memory("Memory per stage", series, 0.8, 80.0 * (1 << 30));
  check_document(svg);
  CHECK(count(svg, "<path") == 3);
  CHECK(count(svg, "class=\"capacity\"") == 1);
  CHECK(svg.find("capacity 80.0 GiB") != std::string::npos);
  CHECK(svg.find("memory (GiB)") != std::string::npos);
  CHECK(svg.find("time (ms)") != std::string::npos);
  CHECK(svg.find(">stage &lt;2&gt;</text>") != std::string::npos);  // legend
  // Step shape: horizontal then vertical moves only after the start.
  const auto d0 = svg.find("<path d=\"M");
  REQUIRE(d0 != std::string::npos);
  const std::string d = svg.substr(d0 + 9, svg.find('"', d0 + 9) - d0 - 9);
  CHECK(d.find('L') == std::string::npos);
  CHECK(count(d, "H") == 3);  // to 0.2 s, to 0.6 s, to the end
  CHECK(count(d, "V") == 2);

  const std::string none = svg_memory("Memory", series, 0.8, 0);
  check_document(none);
  CHECK(none.find("class=\"capacity\"") == std::string::npos);
  CHECK(count(none, "<path") == 3);
}

TEST_CASE("svg memory: long series fold into pixel columns") {
  std::vector<std::pair<double, double>> points;
  for (int i = 0; i < 200000; ++i) {
    points.emplace_back(i * 5e-6, (i % 7) * 1e9 + 4e9);
  }
  const std::string svg = svg_memory("long", {{"s", points}}, 1.0, 16e9);
  check_document(svg);
  CHECK(count(svg, "<path") == 1);
  CHECK(svg.size() < 100000);
  // The folded columns keep the full range: 4 GB (lowest) and 10 GB (highest) both appear.
  CHECK(svg.find("peak 9.31 GiB") != std::string::npos);
}

TEST_CASE("svg memory: empty input") {
  SUBCASE("no series, span 0, no capacity") {
    const std::string svg = svg_memory("", {}, 0, 0);
    check_document(svg);
    CHECK(count(svg, "<path") == 0);
    CHECK(svg.find("(no data)") != std::string::npos);
  }
  SUBCASE("a series without points") {
    const std::string svg = svg_memory("m", {{"empty", {}}, {"one", {{0.5, 2e9}}}}, 0, 4e9);
    check_document(svg);
    CHECK(count(svg, "<path") == 1);
    CHECK(svg.find(">empty</text>") != std::string::npos);  // still in the legend
  }
}

TEST_CASE("svg: python's XML parser accepts the output (skipped without python3)") {
  if (std::system("python3 -c \"import xml.etree.ElementTree\" > /dev/null 2>&1") != 0) {
    MESSAGE("python3 with xml.etree not available; skipped");
    return;
  }
  const parasim::test::TempDir dir;
  const std::string nasty = "a<&>\"b' \xc2\xb5";
  parasim::test::write_text(dir.path() / "t.svg",
                            svg_timeline(nasty, {{nasty, {box(0, 1, BoxKind::kComm, nasty)}}}, 2));
  parasim::test::write_text(dir.path() / "m.svg",
                            svg_memory(nasty, {{nasty, {{0, 1e9}, {1, 2e9}}}}, 2, 3e9));
  for (const char* name : {"t.svg", "m.svg"}) {
    const std::string cmd =
        "python3 -c \"import sys, xml.etree.ElementTree as E; "
        "r = E.parse(sys.argv[1]).getroot(); "
        "sys.exit(0 if r.tag == '{http://www.w3.org/2000/svg}svg' else 1)\" " +
        dir.file(name);
    CHECK_MESSAGE(std::system(cmd.c_str()) == 0, name);
  }
}
