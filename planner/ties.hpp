#pragma once
// parasim::plan ties — plans whose step times parasim cannot tell apart, and the simplest of them.
//
// The tolerance: how close two plans' step times may be before parasim cannot tell them apart:
// the model's own step-time error in the scenario's regime, as the development set measures it
// (docs/validation.md, the table of families; `parasim validate-against scenarios/validation`).
// The planner marks the rows of its table within it of the winner as a tie, names the simplest
// of them and counts the ranked rows below the table that tie too (plan_format.cpp);
// `plan --tie PERCENT` replaces it.
//
//   multi-node   7.20 %   family vtrain-multi-node (55 runs, tp x pp x dp over several nodes);
//                         megatron-table1, the other multi-node family, is 6.79 %: the larger is
//                         taken
//   one node    23.83 %   family vtrain-single-node (1,386 runs on one node)
//
// tests/planner/ties_test.cpp checks these figures against docs/validation.md, so a
// re-recorded validation table and this one cannot drift apart.

#include <string>
#include <vector>

#include "planner/candidate.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::plan {

struct ModelError {
  double fraction = 0;   // mean absolute step-time error, 0.072 = 7.2 %
  std::string regime;    // "multi-node"
  std::string source;    // "docs/validation.md, family vtrain-multi-node"
};

// The error for a plan on `gpus` GPUs of the scenario's cluster.
ModelError model_error(const strat::Scenario& base, int gpus);

// The parallel dimensions a candidate uses besides data parallelism: tp, pp and cp above 1.
int parallel_dimensions(const Candidate& c);

// Whether `a` is simpler to run than `b`: fewer parallel dimensions, then no context
// parallelism, then fewer chunks (false when neither is).
bool simpler(const Candidate& a, const Candidate& b);

// Of the rows (best first, their step times in seconds), those within `fraction` of the first:
// their indices, and which of them is simplest (the first such in row order). Empty when
// fewer than two rows tie, or fraction <= 0.
struct Tie {
  std::vector<int> rows;
  int simplest = -1;
};
Tie tie_with_winner(const std::vector<Candidate>& rows, const std::vector<double>& step_s,
                    double fraction);

}  // namespace parasim::plan
