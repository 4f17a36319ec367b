#pragma once
// parasim::cli plan output — the ranked table with the winner's bottleneck and the rejects
// (text), the candidates file (--json) and the plan file (--out; docs/plan.md,
// docs/plan.schema.json).

#include <string>

#include <nlohmann/json.hpp>

#include "planner/planner.hpp"

namespace parasim::cli {

struct PlanProvenance {
  std::string version;       // parasim's
  std::string profile;       // path, empty: the analytical model
  std::string device;        // the device the figures were costed on
  std::string command_line;
};

// `timings`: add the wall time of each tier (the only line that differs from run to run).
std::string format_plan_text(const strat::Scenario& base, const plan::PlanResult& r,
                             bool timings);
// The plan file: version, the winning scenario in full, its predicted figures (simulated and
// screened), the runners-up, the rejects, the screen's accuracy, provenance.
nlohmann::ordered_json plan_file_json(const nlohmann::json& document, const strat::Scenario& base,
                                      const plan::PlanResult& r, const PlanProvenance& p);
nlohmann::ordered_json candidates_json(const strat::Scenario& base, const plan::PlanResult& r);

}  // namespace parasim::cli
