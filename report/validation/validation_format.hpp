#pragma once
// parasim::validation — the outputs of `parasim validate-against`: the text summary, the JSON
// result and the CSV table. Every number carries its unit in its header or key: seconds (_s),
// fractions (_fraction: 0.05 is 5 %) in JSON and CSV, percent (%) in the text.
//
// JSON: {"parasim_validation_result": 1, "cost_model", "filter", "error_definition",
//        "inputs": [{"file", "name", "source", "cases"}],
//        "groups": [{"scope", "name", "cases", "simulated", "not_expressible",
//                    "not_expressible_reasons": [{"reason", "cases"}], "mae_fraction",
//                    "median_abs_error_fraction", "worst_signed_error_fraction", "worst_case",
//                    "bias_fraction"}],   (the statistics are null for a group with none simulated)
//        "cases": [{"source", "id", "family", "status", "measured_step_time_s",
//                   "predicted_step_time_s", "signed_error_fraction", "critical_path_s",
//                   "exposed_comm_s", "bubble_fraction_mean", "mfu_fraction",
//                   "not_expressible"}]}
// CSV: one row per case, the same fields with the critical path and exposed communication
// split into columns (path_forward_s, ..., exposed_tp_s, ...).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/validation/validation_stats.hpp"

namespace parasim::validation {

struct FormatContext {
  const std::vector<ValidationFile>& files;
  const std::vector<CaseResult>& results;
  const std::vector<GroupStats>& groups;
  std::string cost_model;  // "analytical" or "profile FILE"
  std::string filter;      // empty: none
};

std::string format_summary(const FormatContext& context, std::size_t worst_k);
nlohmann::json results_to_json(const FormatContext& context);
std::string results_to_csv(const FormatContext& context);

}  // namespace parasim::validation
