// parasim validate-against: reads validation files, simulates their cases, prints the errors.
#include "cli/validate_against_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <thread>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "report/validation/validation_file.hpp"
#include "report/validation/validation_format.hpp"
#include "report/validation/validation_guard.hpp"
#include "report/validation/validation_run.hpp"
#include "report/validation/validation_stats.hpp"

namespace parasim::cli {

CLI::App* add_validate_against_command(CLI::App& app, ValidateAgainstOptions& va) {
  va.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  va.progress = isatty(STDERR_FILENO) != 0;
  CLI::App* cmd = app.add_subcommand(
      "validate-against",
      "Simulate measured training runs and print how far parasim's step times are from them: "
      "per source, per family and overall the cases, mean absolute error, median, worst and "
      "bias, then the worst cases with where their predicted step went (docs/validation.md). "
      "Cases parasim cannot express are counted with the reason. E.g.\n"
      "  parasim validate-against scenarios/validation --csv cases.csv\n"
      "  parasim validate-against my-runs.json --profile a100.json\n"
      "Exit code 1: --guard found the error grown past the recorded value.");
  cmd->add_option("path", va.path,
                  "A validation file, or a folder: every *.json in it with "
                  "\"parasim_validation\" at the top level")
      ->required();
  cmd->add_option("--json", va.json,
                  "Write the statistics and every case (measured and predicted step time, "
                  "signed error, critical path, exposed communication, bubble) to FILE, or "
                  "'-' for standard output");
  cmd->add_option("--csv", va.csv, "Write one row per case to FILE, or '-'");
  cmd->add_option("--profile", va.profile,
                  "Cost-model profile JSON (docs/profile.md) for every case, instead of the "
                  "analytical model and of the profiles validation files name for their "
                  "machines")
      ->type_name("FILE");
  cmd->add_flag("--allow-foreign-profile", va.allow_foreign_profile, kForeignProfileHelp);
  cmd->add_option("--threads", va.threads,
                  "Cases simulated at once; the output is the same for any count (default: the "
                  "cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--filter", va.filter,
                  "Only the cases whose id, family or file name contains TEXT");
  cmd->add_option("--worst", va.worst, "How many of the worst cases to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--guard", va.guard,
                  "Check the result against a recorded guard (scenarios/validation/guard.json): "
                  "exit 1 if the overall or a source's MAE grew by more than its tolerance");
  return cmd;
}

namespace {

// What the cases were simulated with: --profile for every case, or the analytical model with
// each file's own profile where it names one.
std::string cost_model_text(const std::vector<validation::ValidationFile>& files,
                            const std::string& profile) {
  if (!profile.empty()) return "profile " + profile + " for every case";
  std::string text = "analytical (each scenario's hardware)";
  for (const auto& f : files) {
    if (f.profile) text += "; " + f.name + ": its machine's profile " + f.profile_path;
  }
  return text;
}

}  // namespace

int run_validate_against(const ValidateAgainstOptions& o, std::ostream& out, std::ostream& err) {
  using namespace parasim::validation;
  try {
    if (!o.guard.empty() && (!o.filter.empty() || !o.profile.empty())) {
      err << "--guard compares the whole set as its files map it (each file's own profile or "
             "the analytical model), as it was recorded; drop --filter and --profile\n";
      return kExitBadInput;
    }
    if (o.json == "-" && o.csv == "-") {
      err << "--json - and --csv - would both write to standard output; give one a file\n";
      return kExitBadInput;
    }
    // Wrong output paths fail before the work, naming the output, not the input.
    OutputFile json_file(o.json);
    OutputFile csv_file(o.csv);
    json_file.check_target();
    csv_file.check_target();
    check_outputs_not_inputs({&json_file, &csv_file},
                             {{o.path, "validation file"}, {o.profile, "profile"},
                              {o.guard, "guard"}});
    if (!o.profile.empty()) check_input_file(o.profile);
    if (!o.guard.empty()) check_input_file(o.guard);
    const std::vector<ValidationFile> files = load_validation_set(o.path);
    for (const ValidationFile& f : files) {
      check_outputs_not_inputs({&json_file, &csv_file}, {{f.path, "validation file"}});
    }
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    std::optional<Guard> guard;
    if (!o.guard.empty()) guard = load_guard(o.guard);

    const auto selection = select_cases(files, o.filter);
    if (selection.empty()) {
      err << fmt::format("{}: no case's id, family or file name contains \"{}\"\n",
                         cost::printable(o.path), cost::printable(o.filter));
      return kExitBadInput;
    }
    if (!o.profile.empty()) {  // once per device, before any case runs
      std::set<std::string> devices;
      for (const auto& [f, i] : selection) {
        const auto& c = files[f].cases[i];
        if (!c.expressible() || !devices.insert(c.scenario->cluster.device.name).second) continue;
        cost::check_profile_fits(profile, c.scenario->cluster, o.allow_foreign_profile);
      }
    }
    RunOptions run_options;
    run_options.profile = o.profile.empty() ? nullptr : &profile;
    run_options.allow_foreign_profile = o.allow_foreign_profile;
    run_options.threads = o.threads;
    if (o.progress) {
      run_options.progress = [&err](std::size_t done, std::size_t total) {
        if (done == total || done % 16 == 0) {
          err << fmt::format("\rsimulating case {} of {}", done, total) << std::flush;
          if (done == total) err << "\n";
        }
      };
    }
    const RunOutput run = run_cases(files, selection, run_options);
    const std::vector<GroupStats> groups = group_stats(run.results, files);
    const FormatContext context{files, run.results, groups, cost_model_text(files, o.profile),
                                o.filter};
    std::string summary = format_summary(context, static_cast<std::size_t>(o.worst));
    GuardVerdict verdict;
    if (guard) {
      verdict = check_guard(*guard, groups);
      summary += "\n" + verdict.text;
    }

    // Everything is computed; stage the outputs, then put them in place together.
    if (!o.json.empty()) json_file.stage(results_to_json(context).dump(1) + "\n");
    if (!o.csv.empty()) csv_file.stage(results_to_csv(context));
    commit_outputs({&json_file, &csv_file}, out);
    std::ostream& text = json_file.is_stdout() || csv_file.is_stdout() ? err : out;
    text << summary;
    for (const std::string& w : run.warnings) err << "warning: " << w << "\n";
    return verdict.passed ? kExitOk : kExitFailure;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const ValidationInputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const RunError& e) {
    err << e.what();
    return e.exit_code();
  } catch (const std::exception& e) {
    err << cost::printable(o.path) << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
