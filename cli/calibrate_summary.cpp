#include "cli/calibrate_summary.hpp"

#include <fmt/format.h>

#include <vector>

#include "costmodel/collective_cost.hpp"

namespace parasim::cli {

void print_calibrate_summary(std::FILE* out, const cost::MeasuredTables& t,
                             const std::string& path) {
  // Never 0 points: a plan without points is refused before measuring.
  std::size_t collective_points = 0, wrong = 0;
  for (const auto& s : t.collectives) {
    collective_points += s.points.size();
    for (const auto& p : s.points) wrong += p.correct ? 0 : 1;
  }
  std::fprintf(out,
               "wrote %s: %zu GEMM, %zu collective (%zu series), %zu solver, %zu RMSNorm "
               "points%s%s\n",
               path.c_str(), t.gemm.size(), collective_points, t.collectives.size(),
               t.solvers.size(), t.norms.size(), t.launch_overhead ? ", launch overhead" : "",
               t.overlap.empty() ? "" : ", overlap");
  if (wrong > 0) {
    std::fprintf(out, "warning: %zu collective points returned WRONG results (marked "
                      "\"correct\": false; the cost model ignores them)\n", wrong);
  }
  std::vector<std::string> unresolved;
  for (const auto& s : t.collectives) {
    if (!s.fit) continue;
    const std::string bandwidth =
        s.fit->beta_s_per_byte > 0 ? fmt::format("{:.3f} GB/s", 1e-9 / s.fit->beta_s_per_byte)
                                   : std::string("unresolved");
    std::fprintf(out, "  %-15s %d ranks (%d per node): alpha %.2f us, 1/beta %s\n",
                 cost::collective_name(s.kind), s.group.size, s.group.gpus_per_node_in_group,
                 s.fit->alpha_s * 1e6, bandwidth.c_str());
    if (!(s.fit->beta_s_per_byte > 0)) {
      unresolved.push_back(fmt::format("{} on {} ranks", cost::collective_name(s.kind),
                                       s.group.size));
    }
  }
  // calibrate/fit.hpp clamps beta at 0 when the times do not grow with the message size: noise
  // (another process on the cores, a rank descheduled) larger than the largest message's
  // transfer time. The profile keeps the points, but its fit extrapolates above the largest
  // message at alpha alone.
  for (const std::string& u : unresolved) {
    std::fprintf(out,
                 "warning: %s: the measured times do not grow with the message size, so the "
                 "bandwidth is unresolved (beta 0) and messages above --max-bytes would cost "
                 "alpha alone; measure on idle cores, or with a larger --max-bytes\n",
                 u.c_str());
  }
}

}  // namespace parasim::cli
