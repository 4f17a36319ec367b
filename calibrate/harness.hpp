#pragma once
// parasim::calib harness — runs a SweepPlan on a MeasurementBackend and collects the results as
// the profile's measured tables (costmodel/measured_tables.hpp).
//
// Order: launch overhead, GEMMs, norms, solvers, collectives, overlap (cheap and single-GPU
// first, so an interrupted run has the most useful tables). After every point `on_update` is
// called on rank 0 with the tables so far (complete == false until the last point), so the
// caller can rewrite the profile file: a run killed at any moment leaves a valid profile of what
// was measured, marked incomplete. Collective series get their alpha-beta fit (fit.hpp) as soon
// as they hold two points, and again after every point.
//
// Ranks: every rank calls run_calibration with the same plan. Single-rank measurements run on
// rank 0 while the others wait; after each, every rank learns whether it succeeded, so a failure
// on rank 0 ends the run on every rank (std::runtime_error naming the point and the cause)
// instead of leaving the others waiting forever.

#include <functional>

#include "calibrate/backend.hpp"
#include "calibrate/process_group.hpp"
#include "calibrate/progress.hpp"
#include "calibrate/sweep_plan.hpp"

namespace parasim::calib {

using TablesCallback = std::function<void(const cost::MeasuredTables&)>;

cost::MeasuredTables run_calibration(MeasurementBackend& backend, const ProcessGroup& group,
                                     const SweepPlan& plan, const kernels::TimingOptions& timing,
                                     cost::Provenance provenance, Progress& progress,
                                     const TablesCallback& on_update);

// Runs `measure` on rank 0 only, after advancing `progress` with `what`; every rank learns
// whether it worked, and all throw std::runtime_error("what: cause") when it did not.
void run_on_rank0(const ProcessGroup& group, Progress& progress, const std::string& what,
                  const std::function<void()>& measure);

// Short descriptions used by the progress bar and error messages ("gemm 4096x4096x1024 bf16").
std::string describe(const GemmCase& c);
std::string describe(const CollectiveCase& c);
std::string describe(const SolverCase& c);
std::string describe(const NormCase& c);

}  // namespace parasim::calib
