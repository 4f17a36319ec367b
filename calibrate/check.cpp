#include "calibrate/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "calibrate/harness.hpp"
#include "calibrate/measured_cluster.hpp"

namespace parasim::calib {
namespace {

std::string time_text(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

}  // namespace

CheckReport check_profile(MeasurementBackend& backend, const ProcessGroup& group,
                          const cost::Profile& profile, const SweepPlan& plan,
                          const kernels::TimingOptions& timing, Progress& progress) {
  const cost::ClusterSpec cluster = measured_cluster(profile.measured);
  const cost::CostModel costs = cost::make_cost_model(cluster, &profile);
  CheckReport report;
  const bool root = group.rank() == 0;
  auto on_rank0 = [&](const std::string& what, const std::function<void()>& body) {
    run_on_rank0(group, progress, what, body);
  };
  for (const auto& c : plan.gemms) {
    on_rank0(describe(c), [&] {
      const double measured = backend.gemm(c, timing).median_s;
      const double predicted = costs.gemm_model().gemm_time(c.shape).to_seconds();
      report.rows.push_back(CheckRow{"gemm", describe(c), measured, predicted, ""});
    });
  }
  for (const auto& c : plan.norms) {
    on_rank0(describe(c), [&] {
      const cost::NormPoint p = backend.norm(c, timing);
      const double predicted =
          cost::memory_bound_time(p.moved, cluster.device, costs.memory_efficiency()).to_seconds();
      report.rows.push_back(CheckRow{"rmsnorm", describe(c), p.time.median_s, predicted, ""});
    });
  }
  for (const auto& c : plan.solvers) {
    on_rank0(describe(c), [&] {
      const double measured = backend.solver(c, timing).median_s;
      const auto predicted = costs.measured_solver_time(c.solver, c.block, c.batch, c.iterations,
                                                        c.dtype, c.batched);
      report.rows.push_back(CheckRow{"solver", describe(c), measured,
                                     predicted ? predicted->to_seconds() : 0.0,
                                     predicted ? "" : "no solver table in the profile"});
    });
  }
  const cost::GroupPlacement place = backend.placement();
  for (const auto& c : plan.collectives) {
    progress.step(describe(c));
    const cost::CollectivePoint p = backend.collective(c.kind, c.message, c.in_place, timing);
    const double predicted =
        cost::estimate_time(costs.collective(c.kind, c.message, place), cluster).to_seconds();
    if (root) {
      report.rows.push_back(CheckRow{"collective", describe(c), p.time.median_s, predicted,
                                     p.correct ? "" : "WRONG RESULT"});
    }
  }
  progress.finish();
  report.warnings = costs.warnings().list();
  return report;
}

std::string format_check_report(const CheckReport& report) {
  std::string out = fmt::format("{:<44} {:>12} {:>12} {:>9}\n", "held-out point", "measured",
                                "predicted", "error");
  std::map<std::string, double> worst;
  for (const auto& r : report.rows) {
    if (r.predicted_s <= 0) {
      out += fmt::format("{:<44} {:>12} {:>12} {:>9}  {}\n", r.what, time_text(r.measured_s), "-",
                         "-", r.note);
      continue;
    }
    const double e = r.error_percent();
    worst[r.family] = std::max(worst[r.family], std::abs(e));
    out += fmt::format("{:<44} {:>12} {:>12} {:>+8.1f}%{}\n", r.what, time_text(r.measured_s),
                       time_text(r.predicted_s), e, r.note.empty() ? "" : "  " + r.note);
  }
  out += "\nlargest |error| by family:";
  for (const auto& [family, e] : worst) out += fmt::format("  {} {:.1f}%", family, e);
  out += "\n";
  for (const auto& w : report.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace parasim::calib
