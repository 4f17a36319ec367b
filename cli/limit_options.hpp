#pragma once
// parasim::cli limit options — --max-ops, --max-memory and --max-shampoo-blocks, the limits on
// the work a simulation may take (strategies/input/workload_estimate.hpp), added to a subcommand
// (simulate, compare, validate) with --help text that says what each bounds and its default.

#include <CLI/CLI.hpp>

#include "strategies/input/workload_estimate.hpp"

namespace parasim::cli {

void add_limit_options(CLI::App& command, strat::WorkloadLimits& limits);

}  // namespace parasim::cli
