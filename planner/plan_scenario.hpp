#pragma once
// parasim::plan scenario files — a candidate written out as a scenario (docs/plan.md).
//
// The written scenario is the user's scenario document with the searched fields set: the whole
// "parallel" section written out (every searched key, the others kept as the user gave them),
// "training" micro_batch, recompute and attention, "optimizer" name, stacking and block size,
// "cluster" nodes (gpus / gpus_per_node, or 1 with gpus_per_node set to gpus for a plan on part of
// one node); "search" removed. Model and cluster keep the user's
// form (a preset stays a preset), so `parasim simulate plan.json` parses exactly the question
// that was planned and reproduces the plan's figures. Plan files are read back by
// strategies/input/scenario_file.hpp, as every command reads them.

#include <string>

#include <nlohmann/json.hpp>

#include "planner/candidate.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {

nlohmann::json scenario_json(const nlohmann::json& document, const strat::Scenario& base,
                             const Candidate& c);

}  // namespace parasim::plan
