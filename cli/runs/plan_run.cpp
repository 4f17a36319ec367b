#include "cli/runs/plan_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plan_format.hpp"
#include "planner/feasibility.hpp"
#include "planner/plan_scenario.hpp"
#include "planner/ties.hpp"
#include "planner/trainer_filter.hpp"

namespace parasim::cli {
namespace {

const nlohmann::json* search_section(const plan::PlanQuestion& q) {
  return q.document.contains("search") ? &q.document["search"] : nullptr;
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

}  // namespace

strat::ScenarioLimits plan_scenario_limits() {
  strat::ScenarioLimits limits;
  limits.layout_optional = true;
  return limits;
}

PlanSetup prepare_plan(const strat::ScenarioFile& file, const PlanCommandOptions& o) {
  PlanSetup setup{
      plan::plan_question(file, plan::requested_trainer(o.trainer, file), plan_scenario_limits()),
      {},
      {},
      {}};
  const plan::PlanQuestion& question = setup.question;
  plan::SearchOptions& so = setup.search;
  so.allow_async = o.allow_async;
  so.gpus = o.gpus;
  so.max_candidates = o.max_candidates;
  so.flags = o.search;
  so.per_op_recompute = question.trainer == exporter::Target::kTorchtitan;
  // The trainer's TP overlap (docs/tp-overlap.md): torchtitan's AsyncTP, Megatron's userbuffers.
  if (question.trainer == exporter::Target::kTorchtitan) so.tp_overlap = "async-tp";
  if (question.trainer == exporter::Target::kMegatron) so.tp_overlap = "userbuffers";
  try {
    setup.space = plan::make_search_space(question.base, search_section(question), so, o.scenario);
  } catch (const cost::InputError& e) {  // a plan's search section lies under /scenario
    if (!file.is_plan) throw;
    throw strat::under_prefix(e, file.path_prefix);
  }
  plan::refuse_fixed(question, setup.space, file);
  return setup;
}

void add_plan_costs(PlanSetup& setup, const cost::Profile* profile) {
  setup.costs = plan::make_space_cost_models(setup.question.base, setup.space, profile);
}

plan::PlanOptions plan_options(const PlanSetup& setup, const PlanCommandOptions& o,
                               int ranks_here) {
  plan::PlanOptions po;
  po.top = o.top;
  po.max_simulate = o.max_simulate;
  po.headroom = o.headroom;
  // Default: the screen on every core, shared by the ranks of this node; the simulate tier
  // (rank 0 alone, the other ranks done) on every core.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po.threads = o.threads > 0 ? o.threads : std::max(1, cores / std::max(1, ranks_here));
  po.simulate_threads = o.threads > 0 ? o.threads : cores;
  po.keep_all = !o.json.empty();
  po.keep = o.keep;
  po.trainer = setup.question.trainer;
  po.yours = setup.question.base.layout_given;
  return po;
}

std::string plan_text(const PlanSetup& setup, const strat::ScenarioFile& file,
                      const plan::PlanResult& r, const PlanCommandOptions& o) {
  return format_plan_text(setup.question.base, r, o.timings,
                          annotations(setup.question, r, o, file));
}

std::string plan_candidates_text(const PlanSetup& setup, const plan::PlanResult& r) {
  return candidates_json(setup.question.base, r).dump(2) + "\n";
}

std::string plan_file_text(const PlanSetup& setup, const plan::PlanResult& r,
                           const PlanCommandOptions& o) {
  const plan::PlanQuestion& q = setup.question;
  const PlanProvenance p{PARASIM_VERSION,
                         o.profile,
                         setup.costs.view.at(q.base.cluster.total_gpus()).device().name,
                         o.command_line,
                         q.trainer ? exporter::target_name(*q.trainer) : "",
                         q.trainer_label,
                         q.defaults};
  return plan_file_json(q.document, q.base, r, p).dump(2) + "\n";
}

std::string no_plan_line(const PlanSetup& setup, const plan::PlanResult& r) {
  const plan::PlanQuestion& q = setup.question;
  std::vector<int> gpus;  // the GPU counts searched, in order
  for (const plan::Layout& l : setup.space.layouts) {
    if (std::find(gpus.begin(), gpus.end(), l.gpus) == gpus.end()) gpus.push_back(l.gpus);
  }
  if (gpus.empty()) gpus.push_back(q.base.cluster.total_gpus());
  const std::vector<int> nearest =
      r.feasible == 0 && r.rejects.closest_memory.empty() && gpus.size() == 1
          ? plan::nearest_valid_gpus(q.base, search_section(q), setup.search, gpus.front(),
                                     q.trainer)
          : std::vector<int>{};
  return plan::infeasible_line(r, gpus, nearest, q.trainer_label);
}

}  // namespace parasim::cli
