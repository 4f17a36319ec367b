#pragma once
// parasim::cli compare variant — one item of `parasim compare`'s list: the scenario changed along
// one axis, and the reasons it does not apply to that scenario when it does not. The command
// makes them (cli/compare_variants.hpp); the table and the pictures of report/compare/ read them.

#include <string>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::cli {

struct CompareVariant {
  std::string label;   // the item as written: "zb-h1", "btp", "tsp", "tsp@16K", "dash-gpu/..."
  std::string axis;    // "schedule", "placement", "layout" or "optimizer"
  std::string layout;  // the --layouts item ("tsp", "tp4xsp2"); empty on the other axes
  strat::Scenario scenario;
  std::vector<cost::Problem> not_applicable;  // empty: the variant runs
  bool applies() const { return not_applicable.empty(); }
};

// "message (/json/path); ..." for a row of the table.
std::string not_applicable_text(const CompareVariant& variant);

}  // namespace parasim::cli
