#pragma once
// parasim compare-trace — a profiled run beside its simulation: the run's own kernels priced by
// parasim's cost model per kernel class, and the step per phase (forward, backward, optimizer,
// exposed communication, idle) as the trace shows it and as parasim simulates the scenario
// (calibrate/trace/, report/trace/; docs/calibration.md#compare-trace).
//
// Exit codes: 0 done; 2 bad input (a trace, the scenario, the profile or the command line; every
// problem in a file reported at once).

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace parasim::cli {

struct CompareTraceOptions {
  std::vector<std::string> files;  // TRACE... SCENARIO
  std::string profile;             // empty: the analytical model with the scenario's hardware
  bool allow_foreign_profile = false;
  int gpus_per_node = 0;  // 0: from the traces
  std::string json;       // --json FILE ("-": standard output, the tables to stderr)
};

CLI::App* add_compare_trace_command(CLI::App& app, CompareTraceOptions& options);

int run_compare_trace(const CompareTraceOptions& options, std::ostream& out, std::ostream& err);

}  // namespace parasim::cli
