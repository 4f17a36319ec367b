#include "cli/export_command.hpp"

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_file.hpp"
#include "planner/export/export_context.hpp"
#include "planner/export/exporter.hpp"

namespace parasim::cli {

CLI::App* add_export_command(CLI::App& app, ExportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the configuration a trainer takes for FILE, a scenario or a plan "
      "(docs/export.md): Megatron-LM arguments, a DeepSpeed JSON, torchtitan overrides (or its "
      "0.2 TOML), or Distributed Shampoo / DASH constructor arguments. What the trainer takes from "
      "code or the launcher is said on standard error. A setting the trainer cannot express "
      "(a gpipe schedule in Megatron-LM, context parallelism in DeepSpeed, ...) is refused with "
      "exit code 2, naming it and the targets that support it. For example\n"
      "  parasim export scenarios/llama2-7b-dgx-h100.json --to megatron > megatron.args\n"
      "  torchrun --nproc-per-node 8 pretrain_gpt.py $(cat megatron.args) ...\n"
      "  parasim export plan.json --to deepspeed --out ds_config.json");
  cmd->add_option("file", o.path, "Scenario (docs/scenario.md) or plan JSON file")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--to", o.to,
                  "megatron (megatron-core 0.19.2), deepspeed (0.19.8), torchtitan (0.3.0; 0.2.2 "
                  "with --version 0.2), shampoo (Distributed Shampoo, or DASH for a dash "
                  "scenario)")
      ->required()
      ->check(CLI::IsMember({"megatron", "deepspeed", "torchtitan", "shampoo"}));
  cmd->add_option("--version", o.version,
                  "Trainer version: megatron 0.19; deepspeed 0.19; torchtitan 0.3 or 0.2; "
                  "shampoo f60660661194 (Distributed Shampoo) or 4c98e6e7d8a5 (DASH) "
                  "(default: the first)")
      ->type_name("V")
      ->check(non_empty("a version, e.g. 0.3"));
  cmd->add_option("--out", o.out,
                  "Write to FILE instead of standard output (only when the export succeeds)")
      ->type_name("FILE");
  cmd->add_flag("--json", o.json,
                "JSON instead of text: Megatron-LM's and torchtitan's arguments as a list, "
                "torchtitan 0.2's TOML as an object, Shampoo's constructor as objects (DeepSpeed "
                "is JSON either way, without comments with --json)");
  cmd->add_flag("--allow-approximate", o.allow_approximate,
                "Write the closest configuration when the trainer cannot express a setting, "
                "listing every difference in a header comment and on standard error");
  return cmd;
}

int run_export(const ExportCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    OutputFile file(o.out.empty() ? "-" : o.out);
    file.check_target();
    check_outputs_not_inputs({&file}, {{o.path, "input"}});
    exporter::ExportOptions options;
    if (!exporter::target_from_name(o.to, &options.target)) {
      throw CommandLineError("--to must be megatron, deepspeed, torchtitan or shampoo, not \"" +
                             o.to + "\"");
    }
    options.version = o.version;
    options.json = o.json;
    options.allow_approximate = o.allow_approximate;
    check_input_file(o.path);
    const exporter::ExportInput input = exporter::load_export_input(o.path);
    exporter::ExportResult result;
    try {
      result = exporter::export_scenario(input, options);
    } catch (const std::invalid_argument& e) {
      throw CommandLineError(e.what());
    }
    file.stage(result.text);
    commit_outputs({&file}, out);
    for (const std::string& n : result.notes) err << "parasim export: note: " << n << "\n";
    for (const exporter::Difference& d : result.differences) {
      err << "parasim export: approximate: " << exporter::difference_text(d, result.target_label)
          << "\n";
    }
    if (!o.out.empty() && o.out != "-") {
      err << "parasim export: wrote " << o.out << " (" << result.target_label << ")\n";
    }
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const CommandLineError& e) {
    err << "parasim export: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << cost::printable(o.path) << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
