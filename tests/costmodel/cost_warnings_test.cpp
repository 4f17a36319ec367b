// CostWarnings: deduplicated, sorted, safe to add to from several threads.
#include "costmodel/cost_warnings.hpp"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

using parasim::cost::CostWarnings;

TEST_CASE("Cost warnings are deduplicated and listed sorted") {
  CostWarnings w;
  CHECK(w.empty());
  w.add("b second");
  w.add("a first");
  w.add("b second");
  CHECK(w.size() == 2);
  CHECK(w.list() == std::vector<std::string>{"a first", "b second"});
}

TEST_CASE("Cost warnings: concurrent adds lose nothing") {
  CostWarnings w;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&w, t] {
      for (int i = 0; i < 500; ++i) w.add("line " + std::to_string((i * 7 + t) % 100));
    });
  }
  for (auto& th : threads) th.join();
  CHECK(w.size() == 100);
}
