// `parasim plan` (docs/planner.md). Under `mpirun -np K` (K > 1: the launcher's environment,
// calib::launcher_world_size) it opens calibrate's MPI process group (the MPI plugin, loaded only
// then) and gives the planner its share of the space (planner/space_share.hpp); rank 0 alone
// checks and writes the outputs and speaks, the others write nothing, not even errors. Before
// the search every rank learns the largest exit code of the set-up (ProcessGroup::max), so a
// rank that stopped (bad input, an output refused on rank 0) stops all of them with one code.
#include "cli/plan_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "calibrate/mpi_plugin.hpp"
#include "calibrate/process_group.hpp"
#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "cli/runs/plan_run.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "planner/planner.hpp"
#include "sim/time.hpp"
#include "strategies/input/scenario_file.hpp"

namespace parasim::cli {
namespace {

// The largest of every rank's `code` on every rank (`code` itself for one process). Called once
// per rank, before the search, so no rank waits in the gather for one that stopped.
int agree(const calib::ProcessGroup* group, int code) {
  if (group == nullptr) return code;
  return static_cast<int>(group->max({static_cast<double>(code)}).front());
}

// The planner's view of the ranks (one process without a group).
plan::SpaceShare space_share(const calib::ProcessGroup* group) {
  plan::SpaceShare share;
  if (group == nullptr) return share;
  share.rank = group->rank();
  share.size = group->size();
  share.gather = [group](const std::string& bytes) { return group->gather(bytes); };
  return share;
}

int plan(const PlanCommandOptions& o, const calib::ProcessGroup* group, std::ostream& out,
         std::ostream& err) {
  const bool root = group == nullptr || group->rank() == 0;
  bool agreed = false;
  auto stop = [&agreed, group](int code) {
    if (!agreed) {
      agreed = true;
      agree(group, code);
    }
    return code;
  };
  try {
    if (o.top < 1 || o.max_simulate < 1) {
      throw CommandLineError("--top and --max-simulate take a whole number of 1 or more");
    }
    if (!(o.headroom >= 0 && o.headroom < 1)) {
      throw CommandLineError("--headroom takes a fraction of HBM from 0 to below 1, e.g. 0.05");
    }
    OutputFile json_file(o.json), plan_file(o.out);
    if (json_file.is_stdout() && plan_file.is_stdout()) {
      throw OutputError("--json and --out would both write to standard output", kExitBadInput);
    }
    if (root) {  // the other ranks never touch the outputs
      json_file.check_target();
      plan_file.check_target();
      check_outputs_not_inputs({&json_file, &plan_file},
                               {{o.scenario, "scenario"}, {o.profile, "profile"}});
    }
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::ScenarioFile scenario_file =
        strat::load_scenario_file(o.scenario, plan_scenario_limits());
    PlanSetup setup = prepare_plan(scenario_file, o);
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    if (!o.profile.empty()) {
      cost::check_profile_fits(profile, setup.question.base.cluster, o.allow_foreign_profile);
    }
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    add_plan_costs(setup, o.profile.empty() ? nullptr : &profile);
    const int ranks_here = group == nullptr ? 1 : std::max(1, group->ranks_per_node());
    plan::PlanOptions po = plan_options(setup, o, ranks_here);
    const bool terminal = root && o.progress && isatty(STDERR_FILENO) == 1;
    const auto start = std::chrono::steady_clock::now();
    if (terminal) {
      po.progress = [&err, start](const char* tier, std::uint64_t done, std::uint64_t total) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double eta = done > 0 ? elapsed * (static_cast<double>(total) / static_cast<double>(done) - 1) : 0;
        err << fmt::format("\r  {} {} of {} (ETA {:.0f} s)   ", tier, done, total, eta)
            << std::flush;
      };
    }
    agreed = true;
    if (const int code = agree(group, kExitOk); code != kExitOk) {
      err << "parasim plan: another rank stopped before the search (exit code " << code
          << "); nothing written\n";
      return code;
    }
    const std::optional<plan::PlanResult> shared = plan::run_plan_shared(
        setup.question.base, setup.space, setup.costs.view, po, space_share(group));
    if (!shared) return kExitOk;  // not rank 0: its share is with rank 0
    const plan::PlanResult& r = *shared;
    if (terminal) err << "\r" << std::string(60, ' ') << "\r" << std::flush;

    const std::string text_out = plan_text(setup, scenario_file, r, o);
    if (!o.json.empty()) json_file.stage(plan_candidates_text(setup, r));
    if (r.ranked == 0) {
      out << text_out;
      err << cost::printable(o.scenario) << ": " << no_plan_line(setup, r) << "; nothing written\n";
      return kExitFailure;
    }
    if (!o.out.empty()) plan_file.stage(plan_file_text(setup, r, o));
    commit_outputs({&json_file, &plan_file}, out);
    std::ostream& text = json_file.is_stdout() || plan_file.is_stdout() ? err : out;
    text << text_out;
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return stop(e.exit_code());
  } catch (const CommandLineError& e) {
    err << "parasim plan: " << e.what() << "\n";
    return stop(kExitBadInput);
  } catch (const cost::InputError& e) {
    err << e.what();
    return stop(kExitBadInput);
  } catch (const sim::TimeRangeError& e) {  // as simulate: the scenario's figures are wrong
    err << cost::printable(o.scenario) << ": " << e.what() << kTimeRangeHint << "\n";
    return stop(kExitBadInput);
  } catch (const std::exception& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << "\n";
    return stop(kExitFailure);
  }
}

}  // namespace

int run_plan_command(const PlanCommandOptions& o, std::ostream& out, std::ostream& err) {
  // One process unless a launcher started several: a plain `parasim plan` never loads MPI.
  if (calib::launcher_world_size() <= 1) return plan(o, nullptr, out, err);
  const bool speaks = calib::launcher_rank() == 0;
  std::unique_ptr<calib::ProcessGroup> group;
  try {
    group = calib::open_process_group();
  } catch (const calib::ProcessGroupUnavailable& e) {
    if (speaks) err << "parasim plan: cannot share the search among the ranks: " << e.what() << "\n";
    return kExitNoDevice;
  } catch (const std::exception& e) {
    if (speaks) err << "parasim plan: cannot start the process group: " << e.what() << "\n";
    return kExitFailure;
  }
  std::ostream silent(nullptr);  // the other ranks' text goes nowhere
  const bool root = group->rank() == 0;
  return plan(o, group.get(), root ? out : silent, root ? err : silent);
}

}  // namespace parasim::cli
