// parasim compare: the scenario's variants (compare_variants), simulated one by one, then the
// table (compare_table), the pictures (compare_pictures) and the rows JSON, written together.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/compare_variants.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/output_folder.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "report/compare/compare_pictures.hpp"
#include "report/compare/compare_row.hpp"
#include "report/compare/compare_table.hpp"
#include "report/number_text.hpp"
#include "report/report_format.hpp"
#include "report/svg/svg_sweep.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario_file.hpp"

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
  j["layout"] = v.layout.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v.layout);
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
  j["parallel"] = {{"dp", p.dp},         {"tp", p.tp},
                   {"cp", p.cp},         {"pp", p.pp},
                   {"chunks", p.chunks}, {"sequence_parallel", p.sequence_parallel}};
  return j;
}

std::string rows_json(const strat::Scenario& base, const std::vector<CompareRow>& rows) {
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

// Peak memory against sequence length, one line per layout.
std::string sweep_svg(const strat::Scenario& base, const std::vector<CompareRow>& rows) {
  std::vector<SweepSeries> series;
  for (const auto& row : rows) {
    if (!row.ran()) continue;
    const std::string& name = row.variant.layout;
    auto it = std::find_if(series.begin(), series.end(),
                           [&](const SweepSeries& s) { return s.name == name; });
    if (it == series.end()) {
      series.push_back({name, {}});
      it = series.end() - 1;
    }
    double peak = 0;
    for (const auto& m : row.report.memory) peak = std::max(peak, m.peak_bytes);
    it->points.emplace_back(row.variant.scenario.model.seq_len, peak);
  }
  return svg_sweep(fmt::format("{}: peak memory per GPU against sequence length", base.name),
                   series, base.cluster.device.hbm_capacity.value);
}

}  // namespace

int run_compare(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  try {
    // Wrong output paths fail before the work, not after it.
    OutputFile json_file(o.json);
    json_file.check_target();
    check_outputs_not_inputs({&json_file}, {{o.scenario, "scenario"}, {o.profile, "profile"}});
    OutputFolder svg_folder(o.svg_dir, "--svg");
    if (!o.svg_dir.empty()) svg_folder.check();
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario base = strat::load_scenario_file(o.scenario).scenario;
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    if (!o.profile.empty()) cost::check_profile_fits(profile, base.cluster, o.allow_foreign_profile);
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    const cost::CostModel costs =
        cost::make_cost_model(base.cluster, o.profile.empty() ? nullptr : &profile);
    CompareVariants variants = compare_variants(base, o);
    if (std::none_of(variants.variants.begin(), variants.variants.end(),
                     [](const CompareVariant& v) { return v.applies(); })) {
      cost::Diagnostics none(o.scenario);
      add_not_applicable(variants.variants, none);
      throw cost::InputError(std::move(none));
    }

    std::vector<CompareRow> rows;
    for (auto& v : variants.variants) {
      CompareRow row;
      row.variant = std::move(v);
      if (row.ran()) {
        row.built = strat::build_workload(row.variant.scenario, costs, {false, o.limits});
        sim::EngineOptions options;
        options.record_memory_timeline = !o.svg_dir.empty();
        row.result = sim::Engine(row.built.workload, options).run();
        row.report = strat::make_step_report(row.variant.scenario, row.built, row.result);
      }
      rows.push_back(std::move(row));
    }
    // Everything computed: stage the files, then put them in place.
    std::vector<std::unique_ptr<OutputFile>> files;
    std::string pictures;
    if (!o.svg_dir.empty()) {
      svg_folder.create();  // removed again unless the outputs are committed
      const std::filesystem::path dir(o.svg_dir);
      if (!o.seq_lens.empty()) {
        files.push_back(std::make_unique<OutputFile>((dir / "memory-vs-sequence.svg").string()));
        files.back()->stage(sweep_svg(base, rows));
      }
      std::vector<std::string> labels;
      for (const auto& row : rows) labels.push_back(row.variant.label);
      const std::vector<std::string> stems = picture_stems(labels);
      const double span = shared_span_s(rows);  // one time axis for every variant
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].ran()) continue;
        const std::string stem = (dir / stems[i]).string();
        files.push_back(std::make_unique<OutputFile>(stem + "-timeline.svg"));
        files.back()->stage(compare_timeline_svg(rows[i], span));
        files.push_back(std::make_unique<OutputFile>(stem + "-memory.svg"));
        files.back()->stage(compare_memory_svg(rows[i], span));
        if (stems[i] != labels[i]) {
          pictures += fmt::format("  {}: {}-timeline.svg, {}-memory.svg\n", labels[i], stems[i],
                                  stems[i]);
        }
      }
      pictures = fmt::format("\npictures: {}/<variant>-timeline.svg and -memory.svg{}\n{}",
                             o.svg_dir, pictures.empty() ? "" : "; renamed for the file system:",
                             pictures);
    }
    if (!o.json.empty()) json_file.stage(rows_json(base, rows));
    std::vector<OutputFile*> outputs{&json_file};  // all or none (output_file.hpp)
    for (auto& f : files) outputs.push_back(f.get());
    commit_outputs(outputs, out);
    svg_folder.keep();
    std::ostream& text = json_file.is_stdout() ? err : out;
    const bool same_micro_batches = std::all_of(rows.begin(), rows.end(), [&](const CompareRow& row) {
      return row.variant.scenario.micro_batches() == base.micro_batches();
    });
    text << fmt::format("parasim compare: {} ({} on {} x {}, pp {}, {})\n\n",
                        cost::printable(base.name), cost::printable(base.model.name), count_of(base.cluster.nodes, "node"),
                        count_of(base.cluster.gpus_per_node, "GPU"), base.parallel.pp,
                        same_micro_batches
                            ? fmt::format("{} per step", count_of(base.micro_batches(),
                                                                  "micro-batch", "micro-batches"))
                            : std::string("micro-batches per step vary with the replicas"));
    if (!variants.note.empty()) text << variants.note << "\n\n";
    text << compare_table(rows);
    text << pictures;
    for (const std::string& w : costs.warnings().list()) err << "warning: " << w << "\n";
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  } catch (const std::length_error& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << "\n";
    return std::string(e.what()).find("over the limit") != std::string::npos ? kExitBadInput
                                                                               : kExitFailure;
  } catch (const std::exception& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
