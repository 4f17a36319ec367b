#pragma once
// parasim::cli plan output — the ranked table with the winner's bottleneck and the rejects
// (text), the candidates file (--json) and the plan file (--out; docs/plan.md,
// docs/plan.schema.json).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/planner.hpp"
#include "planner/ties.hpp"

namespace parasim::cli {

struct PlanProvenance {
  std::string version;       // parasim's
  std::string profile;       // path, empty: the analytical model
  std::string device;        // the device the figures were costed on
  std::string command_line;
  std::string trainer;                        // plan --for: "megatron" (empty: none)
  std::string trainer_label;                  // "megatron-core 0.19.2"
  std::vector<std::string> trainer_defaults;  // what its defaults set
};

// What the table shows beside the planner's result (cli/plan_command.cpp fills it).
struct PlanAnnotations {
  std::string trainer_label;          // plan --for: "megatron-core 0.19.2"; empty without
  std::vector<std::string> defaults;  // the trainer's defaults applied (trainer_defaults.hpp)
  // Without --for: the trainers that run each row as planned (trainer_filter.hpp,
  // trainers_running), as "M D T" letters ("-": none): the "yours" row, then the ranked rows.
  std::string yours_runs_on;
  std::string yours_refused;          // plan --for: why the trainer does not run "yours" (or "")
  std::vector<std::string> runs_on;
  plan::ModelError tie;               // rows within tie.fraction of the winner tie (0: off)
};

// "M D T" (megatron, deepspeed, torchtitan) for the trainers given; "-" for none.
std::string trainer_letters(const std::vector<exporter::Target>& trainers);

// `timings`: add the wall time of each tier (the only line that differs from run to run).
std::string format_plan_text(const strat::Scenario& base, const plan::PlanResult& r,
                             bool timings, const PlanAnnotations& notes);
// The plan file: version, the winning scenario in full, its predicted figures (simulated and
// screened), the runners-up, the rejects, the screen's accuracy, provenance.
nlohmann::ordered_json plan_file_json(const nlohmann::json& document, const strat::Scenario& base,
                                      const plan::PlanResult& r, const PlanProvenance& p);
nlohmann::ordered_json candidates_json(const strat::Scenario& base, const plan::PlanResult& r);

}  // namespace parasim::cli
