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
#include <set>
#include <thread>

#include "calibrate/mpi_plugin.hpp"
#include "calibrate/process_group.hpp"
#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/plan_format.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "planner/cost_models.hpp"
#include "planner/feasibility.hpp"
#include "planner/plan_question.hpp"
#include "planner/plan_scenario.hpp"
#include "planner/planner.hpp"
#include "planner/trainer_filter.hpp"
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

// The table's annotations: the trainer asked for and its defaults, or which trainers run each
// row shown; the tie tolerance.
PlanAnnotations annotations(const plan::PlanQuestion& q, const plan::PlanResult& r,
                            const PlanCommandOptions& o, const strat::ScenarioFile& file) {
  PlanAnnotations a;
  a.trainer_label = q.trainer_label;
  a.defaults = q.defaults;
  if (q.trainer && r.yours && r.yours->ran) {
    const auto differences = plan::export_differences(q.base, *q.trainer);
    if (!differences.empty()) {
      a.yours_refused = differences.front().path + ": " + differences.front().feature;
      if (differences.size() > 1) {
        a.yours_refused += fmt::format(" (and {} more)", differences.size() - 1);
      }
    }
  }
  if (!q.trainer) {
    if (r.yours && r.yours->ran) {
      a.yours_runs_on = trainer_letters(plan::trainers_running(q.document, file.file));
    }
    for (int i = 0; i < std::min(r.ranked, 10); ++i) {
      const plan::Candidate& c = r.simulated[static_cast<std::size_t>(i)].screened.candidate;
      a.runs_on.push_back(trainer_letters(
          plan::trainers_running(plan::scenario_json(q.document, q.base, c), file.file)));
    }
  }
  if (o.tie_percent >= 0) {
    a.tie = {o.tie_percent / 100, "", "--tie"};
  } else if (r.ranked > 0) {
    a.tie = plan::model_error(q.base, r.simulated.front().screened.candidate.gpus);
  }
  return a;
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
    strat::ScenarioLimits limits;
    limits.layout_optional = true;  // no "parallel": the planner chooses, no "yours" row
    const strat::ScenarioFile scenario_file = strat::load_scenario_file(o.scenario, limits);
    const plan::PlanQuestion question = plan::plan_question(
        scenario_file, plan::requested_trainer(o.trainer, scenario_file), limits);
    const strat::Scenario& base = question.base;
    const nlohmann::json& document = question.document;
    plan::SearchOptions so;
    so.allow_async = o.allow_async;
    so.gpus = o.gpus;
    so.max_candidates = o.max_candidates;
    so.flags = o.search;
    so.per_op_recompute = question.trainer == exporter::Target::kTorchtitan;
    // The trainer's TP overlap (docs/tp-overlap.md): torchtitan's AsyncTP, Megatron's userbuffers.
    if (question.trainer == exporter::Target::kTorchtitan) so.tp_overlap = "async-tp";
    if (question.trainer == exporter::Target::kMegatron) so.tp_overlap = "userbuffers";
    const nlohmann::json* search = document.contains("search") ? &document["search"] : nullptr;
    const plan::SearchSpace space = [&] {
      try {
        return plan::make_search_space(base, search, so, o.scenario);
      } catch (const cost::InputError& e) {  // a plan's search section lies under /scenario
        if (!scenario_file.is_plan) throw;
        throw strat::under_prefix(e, scenario_file.path_prefix);
      }
    }();
    plan::refuse_fixed(question, space, scenario_file);

    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    if (!o.profile.empty()) cost::check_profile_fits(profile, base.cluster, o.allow_foreign_profile);
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    const plan::SpaceCostModels space_costs =
        plan::make_space_cost_models(base, space, o.profile.empty() ? nullptr : &profile);
    const plan::CostModels& costs = space_costs.view;

    plan::PlanOptions po;
    po.top = o.top;
    po.max_simulate = o.max_simulate;
    po.headroom = o.headroom;
    // Default: the screen on every core, shared by the ranks of this node; the simulate tier
    // (rank 0 alone, the other ranks done) on every core.
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int ranks_here = group == nullptr ? 1 : std::max(1, group->ranks_per_node());
    po.threads = o.threads > 0 ? o.threads : std::max(1, cores / ranks_here);
    po.simulate_threads = o.threads > 0 ? o.threads : cores;
    po.keep_all = !o.json.empty();
    po.keep = o.keep;
    po.trainer = question.trainer;
    po.yours = base.layout_given;
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
    const std::optional<plan::PlanResult> shared =
        plan::run_plan_shared(base, space, costs, po, space_share(group));
    if (!shared) return kExitOk;  // not rank 0: its share is with rank 0
    const plan::PlanResult& r = *shared;
    if (terminal) err << "\r" << std::string(60, ' ') << "\r" << std::flush;

    const std::string text_out =
        format_plan_text(base, r, o.timings, annotations(question, r, o, scenario_file));
    if (!o.json.empty()) json_file.stage(candidates_json(base, r).dump(2) + "\n");
    if (r.ranked == 0) {
      out << text_out;
      std::vector<int> gpus;  // the GPU counts searched, in order
      for (const plan::Layout& l : space.layouts) {
        if (std::find(gpus.begin(), gpus.end(), l.gpus) == gpus.end()) gpus.push_back(l.gpus);
      }
      if (gpus.empty()) gpus.push_back(base.cluster.total_gpus());
      const std::vector<int> nearest =
          r.feasible == 0 && r.rejects.closest_memory.empty() && gpus.size() == 1
              ? plan::nearest_valid_gpus(base, search, so, gpus.front(), question.trainer)
              : std::vector<int>{};
      err << cost::printable(o.scenario) << ": "
          << plan::infeasible_line(r, gpus, nearest, question.trainer_label)
          << "; nothing written\n";
      return kExitFailure;
    }
    if (!o.out.empty()) {
      PlanProvenance p{PARASIM_VERSION,
                       o.profile,
                       costs.at(base.cluster.total_gpus()).device().name,
                       o.command_line,
                       question.trainer ? exporter::target_name(*question.trainer) : "",
                       question.trainer_label,
                       question.defaults};
      plan_file.stage(plan_file_json(document, base, r, p).dump(2) + "\n");
    }
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
