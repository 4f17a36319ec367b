// Suggestions for mistyped commands and options (cli/suggest.hpp).
#include "cli/suggest.hpp"

#include <doctest/doctest.h>

using parasim::cli::edit_distance;
using parasim::cli::nearest_name;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and swaps, ignoring case") {
  CHECK(edit_distance("simulate", "simulate") == 0);
  CHECK(edit_distance("simulat", "simulate") == 1);
  CHECK(edit_distance("valdiate", "validate") == 1);  // one adjacent swap
  CHECK(edit_distance("Compare", "compare") == 0);
  CHECK(edit_distance("list", "devices") == 6);
  CHECK(edit_distance("", "list") == 4);
}

TEST_CASE("nearest_name: a unique prefix, else the nearest within a few edits, else nothing") {
  const std::vector<std::string> commands{"simulate", "compare", "validate", "list", "calibrate",
                                          "devices"};
  CHECK(nearest_name("simulat", commands) == "simulate");
  CHECK(nearest_name("sim", commands) == "simulate");
  CHECK(nearest_name("valdiate", commands) == "validate");
  CHECK(nearest_name("comapre", commands) == "compare");
  CHECK(nearest_name("lsit", commands) == "list");
  CHECK(nearest_name("train", commands) == std::nullopt);
  CHECK(nearest_name("c", commands) == std::nullopt);  // compare and calibrate: no guess
  const std::vector<std::string> options{"--help", "--version"};
  CHECK(nearest_name("-V", options) == "--version");
  CHECK(nearest_name("--verison", options) == "--version");
  CHECK(nearest_name("-x", options) == std::nullopt);
  const std::vector<std::string> simulate{"--profile", "--json", "--trace", "--full"};
  CHECK(nearest_name("--jsn", simulate) == "--json");
  CHECK(nearest_name("--trce", simulate) == "--trace");
}
