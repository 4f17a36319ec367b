#include "cli/profile_notes.hpp"

#include <fmt/format.h>

namespace parasim::cli {

std::vector<std::string> profile_warnings(const cost::Profile& profile, const std::string& path) {
  const cost::MeasuredTables& t = profile.measured;
  const bool calibrated = !t.empty() || !(t.provenance == cost::Provenance{});
  if (!calibrated || t.complete) return {};
  std::size_t collective_points = 0;
  for (const auto& s : t.collectives) collective_points += s.points.size();
  return {fmt::format(
      "{}: \"complete\": false, the calibration that wrote it did not finish: it holds {} GEMM, "
      "{} collective, {} solver and {} RMSNorm points, {} launch overhead and {} overlap points; "
      "what it lacks comes from the analytical model",
      path, t.gemm.size(), collective_points, t.solvers.size(), t.norms.size(),
      t.launch_overhead ? "a" : "no", t.overlap.size())};
}

}  // namespace parasim::cli
