#pragma once
// parasim export — a plan or a scenario as a trainer's configuration (docs/export.md). The
// mapping is in planner/export/; this is the command around it.
//
// Exit codes: 0 written (with --allow-approximate, also when settings differ: each difference is
// in the header where the format has comments, and on standard error); 2 bad input (the file, a
// setting the target cannot express, the command line), nothing written; 1 anything else.

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace parasim::cli {

struct ExportCommandOptions {
  std::string path;  // a scenario or a plan file
  std::string to;    // megatron, deepspeed, torchtitan, shampoo
  std::string version;
  std::string out;  // empty or "-": standard output
  bool json = false;
  bool allow_approximate = false;
};

CLI::App* add_export_command(CLI::App& app, ExportCommandOptions& options);

int run_export(const ExportCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace parasim::cli
