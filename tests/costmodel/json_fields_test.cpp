#include <doctest/doctest.h>

#include "costmodel/json_fields.hpp"
#include "costmodel/units.hpp"

using namespace parasim::cost;

TEST_CASE("JsonObjectReader reports every problem with its path, and unknown keys") {
  const auto j = nlohmann::json::parse(
      R"({"tp": "eight", "bw": 900, "size": "80 GB/s", "tpp": 2, "ok": "2 us"})");
  Diagnostics d("f.json");
  JsonObjectReader r(j, "/parallel", d);
  CHECK_FALSE(r.integer("tp", true, 1, 64).has_value());
  CHECK_FALSE(r.bandwidth("bw", true, kRanges.bandwidth).has_value());
  CHECK_FALSE(r.bytes("size", true, kRanges.buffer_size).has_value());
  CHECK(r.time("ok", true, kMaxPerEventDuration) == parasim::sim::Time::us(2));
  CHECK_FALSE(r.integer("pp", true, 1, 64).has_value());  // missing
  r.finish();
  const auto text = d.to_string();
  CHECK(d.problems().size() == 5);
  CHECK(text.find("f.json: /parallel/tp: expected an integer, got a string") != std::string::npos);
  CHECK(text.find("/parallel/bw: expected a bandwidth with a unit") != std::string::npos);
  CHECK(text.find("/parallel/size: unknown unit \"GB/s\" for a size") != std::string::npos);
  CHECK(text.find("/parallel/pp: required field is missing") != std::string::npos);
  // "tpp" is one edit from both "tp" and "pp"; the one starting like it wins.
  CHECK(text.find("/parallel/tpp: unknown key; did you mean \"tp\"?") != std::string::npos);
}

TEST_CASE("closest_match stays quiet when nothing is close") {
  CHECK(closest_match("zzzzzz", {"layers", "hidden"}).empty());
  CHECK(closest_match("hiden", {"layers", "hidden"}) == "hidden");
}

TEST_CASE("Durations: per-event costs capped at 1 s, and nothing that overflows picoseconds") {
  const auto j = nlohmann::json::parse(R"({"a": "2 s", "b": "1e9 s", "c": "1 s"})");
  Diagnostics d("f.json");
  JsonObjectReader r(j, "/optimizer", d);
  CHECK_FALSE(r.time("a", true, kMaxPerEventDuration).has_value());
  CHECK_FALSE(r.time("b", true, kMaxPerEventDuration).has_value());
  CHECK(r.time("c", true, kMaxPerEventDuration) == parasim::sim::Time::seconds(1));
  r.finish();
  const auto text = d.to_string();
  CHECK(d.problems().size() == 2);
  CHECK(text.find("/optimizer/a: expected a duration of at most 1.000 s, got \"2 s\"") !=
        std::string::npos);
  CHECK(text.find("/optimizer/b: expected a duration of at most 1.000 s, got \"1e9 s\"") !=
        std::string::npos);
}

TEST_CASE("parse_time refuses durations at and beyond the simulator's range, without throwing") {
  std::string why;
  CHECK_FALSE(parse_time("1e6 s", &why).has_value());
  CHECK(why == "expected a duration under 1000000 s (the simulator's range), got \"1e6 s\"");
  CHECK_FALSE(parse_time("1e18 ps", &why).has_value());
  CHECK(parse_time("999999 s", &why) == parasim::sim::Time::seconds(999999));
  CHECK(parse_duration_seconds("1e9 s", &why) == 1e9);
}

TEST_CASE("Quantities: inside the range of the table, overflow and zero refused with the path") {
  const auto j = nlohmann::json::parse(R"({
      "cap": "1e308 TB", "tiny": "512 kB", "ok": "80 GB", "top": "1000 TB",
      "peak": "1e308 TFLOP/s", "none": "0 FLOP/s", "zero": "0 FLOP/s",
      "hbm": "0 B/s", "fast": "1e20 B/s", "huge": "1e400 GB/s"})");
  Diagnostics d("f.json");
  JsonObjectReader r(j, "/device", d);
  CHECK_FALSE(r.bytes("cap", true, kRanges.memory_capacity).has_value());
  CHECK_FALSE(r.bytes("tiny", true, kRanges.memory_capacity).has_value());
  CHECK(r.bytes("ok", true, kRanges.memory_capacity)->value == 80e9);
  CHECK(r.bytes("top", true, kRanges.memory_capacity)->value == 1e15);
  CHECK_FALSE(r.flop_rate("peak", true, kRanges.peak_or_none).has_value());
  CHECK(r.flop_rate("none", true, kRanges.peak_or_none)->flop_per_s == 0);
  CHECK_FALSE(r.flop_rate("zero", true, kRanges.flop_rate).has_value());
  CHECK_FALSE(r.bandwidth("hbm", true, kRanges.bandwidth).has_value());
  CHECK_FALSE(r.bandwidth("fast", true, kRanges.bandwidth).has_value());
  CHECK_FALSE(r.bandwidth("huge", true, kRanges.bandwidth).has_value());
  r.finish();
  const auto text = d.to_string();
  CAPTURE(text);
  CHECK(d.problems().size() == 7);
  CHECK(text.find("f.json: /device/cap: expected a memory capacity between 1 MB and 1000 TB, got "
                  "\"1e308 TB\"") != std::string::npos);
  CHECK(text.find("/device/tiny: expected a memory capacity between 1 MB and") != std::string::npos);
  CHECK(text.find("/device/peak: expected a FLOP rate (0 for none) between 0 FLOP/s and 1000 "
                  "PFLOP/s, got \"1e308 TFLOP/s\"") != std::string::npos);
  CHECK(text.find("/device/zero: expected a FLOP rate between 1 FLOP/s and") != std::string::npos);
  CHECK(text.find("/device/hbm: expected a bandwidth between 1 B/s and 1000 TB/s, got \"0 B/s\"") !=
        std::string::npos);
  CHECK(text.find("/device/fast: expected a bandwidth between") != std::string::npos);
  CHECK(text.find("/device/huge: the number in \"1e400 GB/s\" is beyond the range of a double") !=
        std::string::npos);
}

TEST_CASE("The range table's texts are its bounds, as the unit parser reads them") {
  for (const QuantityRange& range : {kRanges.memory_capacity, kRanges.buffer_size}) {
    CHECK(parse_bytes(range.min_text, nullptr)->value == range.min);
    CHECK(parse_bytes(range.max_text, nullptr)->value == range.max);
  }
  CHECK(parse_bandwidth(kRanges.bandwidth.min_text, nullptr)->bytes_per_s == kRanges.bandwidth.min);
  CHECK(parse_bandwidth(kRanges.bandwidth.max_text, nullptr)->bytes_per_s == kRanges.bandwidth.max);
  for (const QuantityRange& range : {kRanges.flop_rate, kRanges.peak_or_none}) {
    CHECK(parse_flop_rate(range.min_text, nullptr)->flop_per_s == range.min);
    CHECK(parse_flop_rate(range.max_text, nullptr)->flop_per_s == range.max);
    CHECK(range.min <= range.max);
  }
}

TEST_CASE("Diagnostics: control characters in a path or message are written escaped") {
  // An unknown key's raw bytes used to go into the problem's JSON path: a newline split the
  // problem over two lines and an ESC reached the terminal (found by tests/fuzz, input
  // tests/fuzz/crashes/min-newline-in-key.json).
  parasim::cost::Diagnostics d("x.json");
  d.add("/model/a\nb", "unknown key \"\x1b[31m\"");
  d.add("/c1", "a \xc2\x9b b, \xc2\xa0 kept");
  CHECK(d.to_string() ==
        "x.json: /model/a\\x0ab: unknown key \"\\x1b[31m\"\n"
        "x.json: /c1: a \\u009b b, \xc2\xa0 kept\n");
  CHECK(parasim::cost::printable("plain /path ~0") == "plain /path ~0");
  CHECK(parasim::cost::printable(std::string("\x7f\x01", 2)) == "\\x7f\\x01");
}
