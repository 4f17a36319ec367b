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
  CHECK_FALSE(r.bandwidth("bw", true).has_value());
  CHECK_FALSE(r.bytes("size", true).has_value());
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
