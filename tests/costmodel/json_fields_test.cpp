#include <doctest/doctest.h>

#include "costmodel/json_fields.hpp"

using namespace parasim::cost;

TEST_CASE("JsonObjectReader reports every problem with its path, and unknown keys") {
  const auto j = nlohmann::json::parse(
      R"({"tp": "eight", "bw": 900, "size": "80 GB/s", "tpp": 2, "ok": "2 us"})");
  Diagnostics d("f.json");
  JsonObjectReader r(j, "/parallel", d);
  CHECK_FALSE(r.integer("tp", true, 1, 64).has_value());
  CHECK_FALSE(r.bandwidth("bw", true).has_value());
  CHECK_FALSE(r.bytes("size", true).has_value());
  CHECK(r.time("ok", true) == parasim::sim::Time::us(2));
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
