#pragma once
// The lines `parasim calibrate` prints on rank 0 once the profile is written: what it holds,
// the collective points that returned wrong results, each series' alpha-beta fit (alpha in us,
// 1/beta in GB/s, "unresolved" when calibrate/fit.hpp clamped beta at 0) and a warning for each
// fit whose bandwidth the measurement did not resolve.

#include <cstdio>
#include <string>

#include "costmodel/measured_tables.hpp"

namespace parasim::cli {

void print_calibrate_summary(std::FILE* out, const cost::MeasuredTables& tables,
                             const std::string& path);

}  // namespace parasim::cli
