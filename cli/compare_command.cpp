// parasim compare: the scenario's variants (compare_variants), simulated one by one, then the
// table, the rows JSON (cli/runs/compare_run) and the pictures (compare_pictures), written
// together.
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
#include "cli/runs/compare_run.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "report/compare/compare_pictures.hpp"
#include "report/compare/compare_row.hpp"
#include "report/svg/svg_sweep.hpp"
#include "strategies/input/scenario_file.hpp"

namespace parasim::cli {
namespace {

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
    const CompareRun run =
        run_comparison(base, o, o.profile.empty() ? nullptr : &profile, !o.svg_dir.empty());
    const std::vector<CompareRow>& rows = run.rows;

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
    if (!o.json.empty()) json_file.stage(compare_json_text(base, rows));
    std::vector<OutputFile*> outputs{&json_file};  // all or none (output_file.hpp)
    for (auto& f : files) outputs.push_back(f.get());
    commit_outputs(outputs, out);
    svg_folder.keep();
    std::ostream& text = json_file.is_stdout() ? err : out;
    text << compare_text(base, run);
    text << pictures;
    for (const std::string& w : run.warnings) err << "warning: " << w << "\n";
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
