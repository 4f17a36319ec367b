#pragma once
// parasim::exporter — a plan or a scenario as a trainer's configuration (docs/export.md): the
// entry point `parasim export` calls.
//
// export_scenario() maps every field of the scenario for the target (export_types.hpp records
// how, in the result's ledger), puts the header on the text (rendered.hpp says when) and returns
// the configuration; a setting the target cannot express throws cost::InputError naming every
// such setting (exit 2), unless options.allow_approximate, when the closest configuration is
// returned with its differences listed. A --version the target does not know throws
// std::invalid_argument.

#include "planner/export/export_input.hpp"
#include "planner/export/export_types.hpp"

namespace parasim::exporter {

ExportResult export_scenario(const ExportInput& input, const ExportOptions& options);

}  // namespace parasim::exporter
