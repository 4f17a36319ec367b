// planner/ties.hpp: the tie tolerance is the development set's error as docs/validation.md
// records it, per regime; the rows within it of the winner tie and the simplest is named.
#include "planner/ties.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "../support/test_support.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {

TEST_CASE("the tie tolerance of each regime is the MAE docs/validation.md records for it") {
  const std::string doc = test::read_text(test::kSourceDir / "docs" / "validation.md");
  const strat::Scenario s = strat::load_scenario(
      (test::kSourceDir / "scenarios" / "llama2-70b-64gpu.json").string());
  const ModelError multi = model_error(s, 64), single = model_error(s, 8);
  CHECK(multi.regime == "multi-node");
  CHECK(single.regime == "one node");
  // The table row of each family, its MAE column.
  for (const auto& [family, error] : {std::pair{"vtrain-multi-node", multi.fraction},
                                      std::pair{"vtrain-single-node", single.fraction}}) {
    const std::string row = fmt::format("| family `{}` |", family);
    const auto at = doc.find(row);
    REQUIRE_MESSAGE(at != std::string::npos, row);
    const std::string line = doc.substr(at, doc.find('\n', at) - at);
    CHECK_MESSAGE(line.find(fmt::format("| {:.2f} |", 100 * error)) != std::string::npos, line);
  }
}

TEST_CASE("rows within the tolerance of the winner tie; the simplest has the fewest dimensions") {
  auto layout = [](int dp, int tp, int pp, int cp, int chunks) {
    Candidate c;
    c.dp = dp, c.tp = tp, c.pp = pp, c.cp = cp, c.chunks = chunks;
    return c;
  };
  const std::vector<Candidate> rows{layout(4, 8, 2, 1, 2), layout(8, 8, 1, 1, 1),
                                    layout(2, 8, 2, 2, 1), layout(64, 1, 1, 1, 1)};
  const std::vector<double> steps{1.00, 1.05, 1.07, 1.20};
  const Tie t = tie_with_winner(rows, steps, 0.072);
  CHECK(t.rows == std::vector<int>{0, 1, 2});  // 1.20 is 20 % slower: not tied
  CHECK(t.simplest == 1);                       // tp only, against tp x pp and tp x pp x cp
  CHECK(tie_with_winner(rows, steps, 0.01).rows.empty());
  CHECK(tie_with_winner(rows, steps, 0).rows.empty());
  CHECK(simpler(layout(1, 8, 2, 1, 1), layout(1, 8, 2, 1, 2)));  // fewer chunks
  CHECK(simpler(layout(1, 8, 2, 1, 1), layout(1, 8, 1, 2, 1)));  // no cp, same dimensions
  CHECK_FALSE(simpler(layout(1, 8, 2, 1, 1), layout(1, 8, 2, 1, 1)));
}

}  // namespace parasim::plan
