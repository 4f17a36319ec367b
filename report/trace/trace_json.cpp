#include "report/trace/trace_json.hpp"

#include "calibrate/trace/kernel_classes.hpp"

namespace parasim::report {
namespace {

using nlohmann::json;

json phases_json(const calib::trace::PhaseBreakdown& b) {
  json j = {{"steps", b.steps},
            {"window_us", b.window_us},
            {"compute_us", b.compute_us},
            {"communication_us", b.communication_us},
            {"exposed_communication_us", b.exposed_comm_us},
            {"idle_us", b.idle_us}};
  for (int p = 0; p < calib::trace::kTracePhases; ++p) {
    j[std::string(calib::trace::trace_phase_name(static_cast<calib::trace::TracePhase>(p))) +
      "_compute_us"] = b.phase_us[static_cast<std::size_t>(p)];
  }
  return j;
}

}  // namespace

json trace_comparison_json(const std::vector<std::string>& traces, const std::string& scenario,
                           const calib::trace::TraceFit& fit,
                           const calib::trace::TracePricing& pricing,
                           const calib::trace::PhaseBreakdown& traced,
                           const calib::trace::PhaseBreakdown& simulated) {
  const calib::trace::TraceCoverage& c = fit.coverage;
  json classes = json::object();
  for (int k = 0; k < calib::trace::kKernelClasses; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (c.class_kernels[i] == 0) continue;
    classes[calib::trace::kernel_class_name(static_cast<calib::trace::KernelClass>(k))] = {
        {"kernels", c.class_kernels[i]}, {"time_us", c.class_time_us[i]}};
  }
  const double other = c.class_time_us[static_cast<std::size_t>(calib::trace::KernelClass::kOther)];
  json coverage = {
      {"ranks", c.ranks},
      {"steps", c.steps},
      {"kernel_time_us", c.gpu_time_us},
      {"classes", classes},
      {"classified_fraction", c.gpu_time_us > 0 ? (c.gpu_time_us - other) / c.gpu_time_us : 0.0},
      {"fitted_fraction", c.gpu_time_us > 0 ? c.fitted_time_us / c.gpu_time_us : 0.0},
      {"gemm_calls_fitted", c.gemm_calls},
      {"gemm_kernels_without_shape", c.gemm_kernels_without_shape},
      {"norm_calls_fitted", c.norm_calls},
      {"collective_calls_fitted", c.collective_calls},
      {"collective_kernels_without_metadata", c.collective_kernels_without_metadata},
      {"notes", c.notes}};
  json priced = json::array();
  for (const auto& p : pricing.classes) {
    priced.push_back({{"class", calib::trace::kernel_class_name(p.kind)},
                      {"kernels_per_step", p.kernels},
                      {"measured_us", p.measured_us},
                      {"priced_measured_us", p.priced_measured_us},
                      {"parasim_us", p.predicted_us}});
  }
  json largest = json::array();
  for (const auto& s : pricing.largest) {
    largest.push_back({{"kernel", s.what},
                       {"calls_per_step", s.calls},
                       {"measured_us_per_call", s.measured_us},
                       {"parasim_us_per_call", s.predicted_us}});
  }
  return {
      {"traces", traces},
      {"scenario", scenario},
      {"coverage", coverage},
      {"kernel_classes", priced},
      {"largest_priced_kernels", largest},
      {"pricing_notes", pricing.notes},
      {"phases", {{"run", phases_json(traced)}, {"parasim", phases_json(simulated)}}},
      {"step_time_error",
       traced.window_us > 0 ? (simulated.window_us - traced.window_us) / traced.window_us : 0.0}};
}

}  // namespace parasim::report
