#pragma once
// parasim::calib check — `parasim calibrate --check PROFILE`: measures points held out of the
// profile's fit (make_check_plan: geometric midpoints of the fit grids) and compares each with
// what the cost model predicts from the profile, through the same CostModel `simulate --profile`
// uses (make_cost_model on measured_cluster(profile)).
//
// error % = 100 (predicted - measured) / measured. Predictions:
//   gemm         GemmCostModel::gemm_time (kernel body; the measurement is the kernel alone)
//   collective   estimate_time of CostModel::collective on the profile's placement
//   solver       CostModel::measured_solver_time
//   rmsnorm      memory_bound_time of the bytes moved at the profile's memory efficiency

#include <string>
#include <vector>

#include "calibrate/backend.hpp"
#include "calibrate/process_group.hpp"
#include "calibrate/progress.hpp"
#include "calibrate/sweep_plan.hpp"
#include "costmodel/profile.hpp"

namespace parasim::calib {

struct CheckRow {
  std::string family;  // "gemm", "collective", "solver", "rmsnorm"
  std::string what;    // describe() of the point
  double measured_s = 0;
  double predicted_s = 0;  // 0 with `note` when the profile cannot predict it
  std::string note;

  double error_percent() const { return 100.0 * (predicted_s - measured_s) / measured_s; }
};

struct CheckReport {
  std::vector<CheckRow> rows;
  std::vector<std::string> warnings;  // from the cost model (out-of-range lookups, ...)
};

// Every rank calls it (collectives are measured on all ranks); rows are complete on rank 0.
CheckReport check_profile(MeasurementBackend& backend, const ProcessGroup& group,
                          const cost::Profile& profile, const SweepPlan& held_out,
                          const kernels::TimingOptions& timing, Progress& progress);

// The table: what, measured, predicted, error; then the largest |error| per family.
std::string format_check_report(const CheckReport& report);

}  // namespace parasim::calib
