#pragma once
// parasim::cli compare table — the text `parasim compare` prints: one line per variant (tokens/s,
// speedup over the first variant that ran, mean and max bubble, peak memory of the fullest stage
// marked * when it does not fit, most updates crossed, weight versions; "not applicable: why" for
// a variant that does not apply), then peak memory per stage, the optimizer step by part when an
// optimizer other than AdamW is compared, GPUs per replica when the layouts change dp, and the
// warm-up batches excluded from asynchronous schedules, in one line.

#include <string>
#include <vector>

#include "report/compare/compare_row.hpp"

namespace parasim::cli {

// `rows` holds at least one row that ran.
std::string compare_table(const std::vector<CompareRow>& rows);

}  // namespace parasim::cli
