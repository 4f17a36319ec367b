#pragma once
// parasim::cli plan — `parasim plan SCENARIO`: search every way to train the scenario's model on
// its cluster, screen it analytically, simulate the best, print a ranked table and write a plan
// (docs/planner.md, docs/plan.md).

#include <ostream>
#include <string>
#include <vector>

namespace parasim::cli {

struct PlanCommandOptions {
  std::string scenario;
  std::string profile;
  bool allow_foreign_profile = false;  // --allow-foreign-profile
  std::string json;       // --json FILE: screened candidates and the simulated ones
  std::string out;        // --out plan.json
  std::size_t keep = 0;   // --keep N: the best N screened candidates in --json (0: all)
  int top = 16;           // --top
  int max_simulate = 64;  // --max-simulate
  int threads = 0;        // --threads (0: every core)
  double headroom = 0.05; // --headroom
  int gpus = 0;           // --gpus
  bool allow_async = false;
  double max_candidates = 4e8;
  std::vector<std::string> search;  // --search KEY=V1,V2
  std::string trainer;              // --for megatron|deepspeed|torchtitan (empty: search.trainer)
  double tie_percent = -1;          // --tie PERCENT (below 0: the model's error, planner/ties.hpp)
  std::string command_line;         // for provenance
  bool progress = true;             // on a terminal only
  bool timings = false;             // --timings: wall time of each tier
};

int run_plan_command(const PlanCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace parasim::cli
