#include "calibrate/harness.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "calibrate/fit.hpp"

namespace parasim::calib {
namespace {

std::string bytes_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:g} KiB", b / 1024.0);
  return fmt::format("{:g} B", b);
}

class Run {
 public:
  Run(MeasurementBackend& backend, const ProcessGroup& group,
      const kernels::TimingOptions& timing, Progress& progress, const TablesCallback& on_update)
      : backend_(backend), group_(group), timing_(timing), progress_(progress),
        on_update_(on_update) {}

  cost::MeasuredTables& tables() { return tables_; }

  template <typename Measure>
  void on_rank0(const std::string& what, Measure&& measure) {
    run_on_rank0(group_, progress_, what, measure);
    updated();
  }

  void collective(const CollectiveCase& c) {
    const std::string what = describe(c);
    progress_.step(what);
    cost::CollectivePoint point;
    try {
      point = backend_.collective(c.kind, c.message, c.in_place, timing_);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", what, e.what()));
    }
    const cost::GroupPlacement place = backend_.placement();
    cost::CollectiveSeries* series = nullptr;
    for (auto& s : tables_.collectives) {
      if (s.kind == c.kind && s.group.size == place.size &&
          s.group.gpus_per_node_in_group == place.gpus_per_node_in_group &&
          s.group.nodes_spanned == place.nodes_spanned) {
        series = &s;
      }
    }
    if (series == nullptr) {
      tables_.collectives.push_back(cost::CollectiveSeries{c.kind, place, {}, std::nullopt});
      series = &tables_.collectives.back();
    }
    series->points.push_back(point);
    series->fit = fit_series(*series);
    updated();
  }

  void updated() {
    if (group_.rank() == 0 && on_update_) on_update_(tables_);
  }

  MeasurementBackend& backend() { return backend_; }
  const kernels::TimingOptions& timing() const { return timing_; }
  Progress& progress() { return progress_; }

 private:
  MeasurementBackend& backend_;
  const ProcessGroup& group_;
  kernels::TimingOptions timing_;
  Progress& progress_;
  const TablesCallback& on_update_;
  cost::MeasuredTables tables_;
};

}  // namespace

void run_on_rank0(const ProcessGroup& group, Progress& progress, const std::string& what,
                  const std::function<void()>& measure) {
  progress.step(what);
  std::string error;
  if (group.rank() == 0) {
    try {
      measure();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!group.all(error.empty())) {
    throw std::runtime_error(error.empty() ? fmt::format("{}: failed on rank 0", what)
                                           : fmt::format("{}: {}", what, error));
  }
}

std::string describe(const GemmCase& c) {
  const auto& s = c.shape;
  return fmt::format("gemm {}x{}x{}{}{} {}", s.m, s.n, s.k,
                     s.batch > 1 ? fmt::format(" x{}", s.batch) : "",
                     c.transpose_a || c.transpose_b
                         ? fmt::format(" {}{}", c.transpose_a ? 'T' : 'N', c.transpose_b ? 'T' : 'N')
                         : "",
                     cost::dtype_name(s.dtype));
}

std::string describe(const CollectiveCase& c) {
  return fmt::format("{} {}{}", cost::collective_name(c.kind), bytes_text(c.message.value),
                     c.in_place ? " in place" : "");
}

std::string describe(const SolverCase& c) {
  return fmt::format("{} B={} N={} {}{}", c.solver, c.block, c.batch, cost::dtype_name(c.dtype),
                     c.batched ? " batched" : " per block");
}

std::string describe(const NormCase& c) {
  return fmt::format("rmsnorm {}x{}{}", c.rows, c.hidden, c.fused_statistic ? " fused" : "");
}

cost::MeasuredTables run_calibration(MeasurementBackend& backend, const ProcessGroup& group,
                                     const SweepPlan& plan, const kernels::TimingOptions& timing,
                                     cost::Provenance provenance, Progress& progress,
                                     const TablesCallback& on_update) {
  Run run(backend, group, timing, progress, on_update);
  auto& t = run.tables();
  t.provenance = std::move(provenance);
  t.complete = false;
  run.updated();

  if (plan.launch) {
    progress.section("launch overhead", 1);
    run.on_rank0("launch overhead", [&] { t.launch_overhead = backend.launch_overhead(timing); });
  }
  progress.section("gemm", plan.gemms.size());
  for (const auto& c : plan.gemms) {
    run.on_rank0(describe(c), [&] {
      t.gemm.push_back(cost::GemmPoint{c.shape, c.transpose_a, c.transpose_b,
                                       backend.gemm(c, timing)});
    });
  }
  progress.section("rmsnorm", plan.norms.size());
  for (const auto& c : plan.norms) {
    run.on_rank0(describe(c), [&] { t.norms.push_back(backend.norm(c, timing)); });
  }
  progress.section("solver", plan.solvers.size());
  for (const auto& c : plan.solvers) {
    run.on_rank0(describe(c), [&] {
      t.solvers.push_back(cost::SolverPoint{c.solver, c.block, c.batch, c.iterations, c.dtype,
                                            c.batched, backend.solver(c, timing)});
    });
  }
  progress.section("collective", plan.collectives.size());
  for (const auto& c : plan.collectives) run.collective(c);
  progress.section("overlap", plan.overlaps.size());
  for (const auto& c : plan.overlaps) {
    progress.step("overlap gemm + all-reduce");
    t.overlap.push_back(backend.overlap(c, timing));
    run.updated();
  }
  t.complete = true;
  run.updated();
  progress.finish();
  return t;
}

}  // namespace parasim::calib
