#include "cli/runs/compare_run.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/compare_variants.hpp"
#include "cli/runs/simulation_run.hpp"
#include "report/compare/compare_table.hpp"
#include "report/number_text.hpp"
#include "report/report_format.hpp"

namespace parasim::cli {
namespace {

// What a row is, before its results: the variant and every axis it could vary along.
nlohmann::ordered_json row_identity(const CompareVariant& v) {
  const auto& s = v.scenario;
  const auto& p = s.parallel;
  nlohmann::ordered_json j;
  j["variant"] = v.label;
  j["axis"] = v.axis;
  j["applicable"] = v.applies();
  if (!v.applies()) {
    nlohmann::ordered_json reasons = nlohmann::ordered_json::array();
    for (const auto& problem : v.not_applicable) {
      reasons.push_back({{"path", problem.json_path.empty() ? "/" : problem.json_path},
                         {"reason", problem.message}});
    }
    j["not_applicable"] = reasons;
  }
  j["schedule"] = strat::schedule_name(p.schedule);
  j["tp_placement"] = strat::tp_placement_name(p.tp_placement);
  j["layout"] =
      v.layout.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.layout);
  j["seq_len"] = s.model.seq_len;
  nlohmann::ordered_json opt;
  opt["name"] = strat::optimizer_name(s.optimizer.kind);
  if (s.optimizer.kind != strat::OptimizerKind::kAdamW) {
    opt["stacking"] = strat::stacking_name(s.optimizer.stacking);
    opt["solver"] = strat::root_solver_name(s.optimizer.solver);
    opt["precision"] = cost::dtype_name(s.optimizer.precision);
    opt["block_size"] = s.optimizer.block_size;
  }
  j["optimizer"] = opt;
  j["parallel"] = {{"dp", p.dp}, {"tp", p.tp},         {"cp", p.cp},
                   {"pp", p.pp}, {"chunks", p.chunks}, {"sequence_parallel", p.sequence_parallel}};
  return j;
}

}  // namespace

CompareRun run_comparison(const strat::Scenario& base, const CompareOptions& o,
                          const cost::Profile* profile, bool record_memory_timeline) {
  const cost::CostModel costs = cost::make_cost_model(base.cluster, profile);
  CompareVariants variants = compare_variants(base, o);
  if (std::none_of(variants.variants.begin(), variants.variants.end(),
                   [](const CompareVariant& v) { return v.applies(); })) {
    cost::Diagnostics none(o.scenario);
    add_not_applicable(variants.variants, none);
    throw cost::InputError(std::move(none));
  }
  CompareRun run;
  run.note = variants.note;
  SimulationSettings settings;
  settings.limits = o.limits;
  settings.record_memory_timeline = record_memory_timeline;
  for (auto& v : variants.variants) {
    CompareRow row;
    row.variant = std::move(v);
    if (row.ran()) {
      SimulationRun simulated = run_simulation(row.variant.scenario, costs, settings);
      row.built = std::move(simulated.built);
      row.result = std::move(simulated.result);
      row.report = std::move(simulated.report);
    }
    run.rows.push_back(std::move(row));
  }
  run.warnings = costs.warnings().list();
  return run;
}

std::string compare_json_text(const strat::Scenario& base, const std::vector<CompareRow>& rows) {
  nlohmann::ordered_json j;
  j["parasim_compare"] = 1;
  j["scenario"] = base.name;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    nlohmann::ordered_json entry = row_identity(row.variant);
    if (row.ran()) {
      const nlohmann::ordered_json result = report_to_json(row.variant.scenario, row.report);
      for (auto it = result.begin(); it != result.end(); ++it) {
        if (!entry.contains(it.key())) entry[it.key()] = it.value();
      }
    }
    j["rows"].push_back(entry);
  }
  return j.dump(2) + "\n";
}

std::string compare_text(const strat::Scenario& base, const CompareRun& run) {
  const bool same_micro_batches =
      std::all_of(run.rows.begin(), run.rows.end(), [&](const CompareRow& row) {
        return row.variant.scenario.micro_batches() == base.micro_batches();
      });
  std::string text = fmt::format(
      "parasim compare: {} ({} on {} x {}, pp {}, {})\n\n", cost::printable(base.name),
      cost::printable(base.model.name), count_of(base.cluster.nodes, "node"),
      count_of(base.cluster.gpus_per_node, "GPU"), base.parallel.pp,
      same_micro_batches ? fmt::format("{} per step", count_of(base.micro_batches(), "micro-batch",
                                                               "micro-batches"))
                         : std::string("micro-batches per step vary with the replicas"));
  if (!run.note.empty()) text += run.note + "\n\n";
  text += compare_table(run.rows);
  return text;
}

}  // namespace parasim::cli
