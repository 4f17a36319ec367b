#pragma once
// parasim::plan::run_plan — the planner: the analytic screen over every candidate of the space
// (screen.hpp, rules.hpp), then the engine on the best (planner/planner.cpp), ranked by the
// simulated step time; the screen's error and rank correlation over the simulated set.
//
// Selection for the simulate tier: the `top` best estimates (default 16) plus every candidate
// whose estimate is within `within` (10 %) of the best, at most `max_simulate` (64) in all, in
// order of estimate. A simulated candidate that check_scenario rejects, or whose simulated
// peak (the caching allocator's allocated memory plus the CUDA context and NCCL buffers,
// report/memory/allocator_replay.hpp) is over HBM x (1 - headroom), is reported as rejected and
// not ranked; the headroom stands for the allocator's fragmentation and workspaces.
//
// Threads share the index space in blocks; every accumulator is ordered by (figure, index), so
// the result is the same whatever the thread count (screen_tally.hpp). Processes (MPI ranks)
// share it the same way (space_share.hpp): each screens its blocks, rank 0 merges the tallies,
// which gives it exactly the one-process tally, and runs the simulate tier alone.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/export/export_types.hpp"
#include "planner/rules.hpp"
#include "planner/screen.hpp"
#include "planner/screen_tally.hpp"
#include "planner/search_space.hpp"
#include "planner/space_share.hpp"
#include "report/step_report.hpp"

namespace parasim::plan {

struct PlanOptions {
  int top = 16;               // --top
  double within = 0.10;       // also simulate estimates within this fraction of the best
  int max_simulate = 64;      // --max-simulate
  double headroom = 0.05;     // --headroom: peak <= HBM x (1 - headroom)
  int threads = 1;            // --threads
  int simulate_threads = 0;   // the simulate tier's (0: threads)
  bool keep_all = false;      // keep every feasible screened candidate (for --json)
  std::size_t keep = 0;       // with keep_all: at most this many (0: all), best first
  bool yours = true;           // simulate the scenario's own layout (false: it has none)
  // plan --for: only what this trainer runs (trainer_filter.hpp); `base` carries its defaults.
  std::optional<exporter::Target> trainer;
  // Called now and then with (screened, total) and (simulated, to simulate); may be empty.
  std::function<void(const char* tier, std::uint64_t done, std::uint64_t total)> progress;
};

struct Simulated {
  Screened screened;
  bool ran = false;           // built and simulated (false: rejected before, see why)
  std::string why;            // check_scenario's or the limits' message when !ran
  strat::StepReport report;
  double peak_bytes = 0;      // simulated, largest device, with its CUDA context and NCCL buffers
  bool fits = false;          // peak_bytes <= limit
  double screen_error = 0;    // (estimate - simulated) / simulated step time
};

struct Rejects {
  std::array<std::uint64_t, static_cast<std::size_t>(Reason::kCount)> counts{};
  std::vector<Screened> closest_memory;  // smallest screened peak first (at most 5)
};

struct PlanResult {
  std::uint64_t space_size = 0;
  std::uint64_t feasible = 0;        // passed the rules and the memory floor
  double limit_bytes = 0;            // HBM x (1 - headroom)
  double hbm_bytes = 0;
  double screen_seconds = 0, simulate_seconds = 0;
  std::vector<Screened> kept;        // keep_all: feasible candidates, best estimate first
  std::vector<Screened> best;        // the best max_simulate estimates, best first
  std::vector<Simulated> simulated;  // ran and fits first, by simulated step time; then others
  int ranked = 0;                    // leading entries of `simulated` that ran and fit
  Rejects rejects;
  std::optional<Simulated> yours;    // the scenario's own layout
  // Over the simulated set that ran: mean and largest |screen error|, Spearman rank correlation
  // of the estimates with the simulated step times (1 when fewer than 2).
  double mean_abs_error = 0, max_abs_error = 0, spearman = 1;
};

// `base`: the scenario (its parallel section is "your layout"); `costs`: a cost model per GPU
// count of the space (the CLI makes them; all from the same profile).
PlanResult run_plan(const strat::Scenario& base, const SearchSpace& space, const CostModels& costs,
                    const PlanOptions& options);

// The same with the space shared among `share.size` processes, every one calling it with the
// same arguments but its own rank: each screens its share on `options.threads` threads (progress
// counts its own share); rank 0 gathers the tallies, simulates and returns exactly run_plan's
// result; the other ranks return nullopt once their tally is sent. A rank's failure reaches rank
// 0 as a std::runtime_error naming the rank; no rank waits on a rank that failed.
std::optional<PlanResult> run_plan_shared(const strat::Scenario& base, const SearchSpace& space,
                                          const CostModels& costs, const PlanOptions& options,
                                          const SpaceShare& share);

// Simulates one candidate (symmetric) and fills the figures; used by run_plan and the tests.
Simulated simulate_candidate(const strat::Scenario& base, const Screened& s,
                             const CostModels& costs, double limit_bytes);

// The same for a scenario given whole (the "yours" row: the scenario as written, its uneven
// stages included); `s` carries its estimate.
Simulated simulate_scenario(const strat::Scenario& scenario, const Screened& s,
                            const CostModels& costs, double limit_bytes);

// Spearman's rank correlation of two equally long series (average ranks for ties).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace parasim::plan
