#include "report/trace/trace_text.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "calibrate/trace/kernel_classes.hpp"
#include "report/number_text.hpp"

namespace parasim::report {
namespace {

using calib::trace::KernelClass;

std::string ms(double us) {
  return fmt::format("{:.3f}", us / 1e3);
}

std::string percent_error(double predicted, double measured) {
  if (measured <= 0) return "-";
  return fmt::format("{:+.1f} %", (predicted - measured) / measured * 100);
}

std::string share(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f} %", part / whole * 100) : "-";
}

}  // namespace

std::string format_trace_coverage(const calib::trace::TraceFit& fit) {
  const calib::trace::TraceCoverage& c = fit.coverage;
  std::string out = fmt::format("trace import: {}, {}{}; {} ms of kernel time in all\n\n",
                                cli::count_of(c.ranks, "rank"),
                                c.steps > 0 ? cli::count_of(c.steps, "profiled step")
                                            : std::string("no ProfilerStep marks "
                                                          "(the whole trace read)"),
                                c.steps > 0 && c.ranks > 1 ? " each" : "", ms(c.gpu_time_us));
  out += "| kernel class | kernels | time ms | share |\n|---|---:|---:|---:|\n";
  for (int k = 0; k < calib::trace::kKernelClasses; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (c.class_kernels[i] == 0) continue;
    out += fmt::format("| {} | {} | {} | {} |\n",
                       calib::trace::kernel_class_name(static_cast<KernelClass>(k)),
                       cli::grouped_integer(c.class_kernels[i]), ms(c.class_time_us[i]),
                       share(c.class_time_us[i], c.gpu_time_us));
  }
  const std::size_t other = static_cast<std::size_t>(KernelClass::kOther);
  out += fmt::format(
      "\nclassified: {} of the kernel time; fitted into the profile: {} ({} with shapes into "
      "{}, {} into {}, {} matched over the ranks into {})\n",
      share(c.gpu_time_us - c.class_time_us[other], c.gpu_time_us),
      share(c.fitted_time_us, c.gpu_time_us), cli::count_of(c.gemm_calls, "GEMM call"),
      cli::count_of(static_cast<long long>(fit.tables.gemm.size()), "GEMM point"),
      cli::count_of(c.norm_calls, "norm call"),
      cli::count_of(static_cast<long long>(fit.tables.norms.size()), "norm point"),
      cli::count_of(c.collective_calls, "collective call"),
      cli::count_of(static_cast<long long>(fit.tables.collectives.size()), "collective series",
                    "collective series"));
  if (c.gemm_kernels_without_shape > 0) {
    out += fmt::format(
        "not fitted: {} without input shapes (profile with record_shapes=True; "
        "GEMMs inside fused or compiled ops have none)\n",
        cli::count_of(c.gemm_kernels_without_shape, "GEMM kernel"));
  }
  if (c.collective_kernels_without_metadata > 0) {
    out += fmt::format(
        "not fitted: {} without the profiler's collective metadata (PyTorch 2.1 "
        "or later records it; Nsight exports do not carry it)\n",
        cli::count_of(c.collective_kernels_without_metadata, "NCCL kernel"));
  }
  if (c.collective_calls_uneven > 0) {
    out += fmt::format(
        "not fitted: {} over groups whose nodes hold different numbers of their "
        "ranks (parasim's placements are even)\n",
        cli::count_of(c.collective_calls_uneven, "collective call"));
  }
  if (!c.other_kernels_us.empty()) {
    out += "largest unclassified kernels (ms):\n";
    for (const auto& [name, us] : c.other_kernels_us) {
      out += fmt::format("  {:>10}  {}\n", ms(us),
                         name.size() > 110 ? name.substr(0, 107) + "..." : name);
    }
  }
  if (c.launch_median_us > 0) {
    out += fmt::format(
        "kernel launch calls: median {:.2f} us of host time (not written: a "
        "profile's launch_overhead is an empty kernel's launch to end)\n",
        c.launch_median_us);
  }
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  return out;
}

std::string format_trace_pricing(const calib::trace::TracePricing& p) {
  std::string out =
      "The run's own kernels priced by parasim's cost model (ms per rank per step):\n\n"
      "| kernel class | kernels | measured | priced part: measured | parasim | error |\n"
      "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& c : p.classes) {
    const bool priced = c.priced_measured_us > 0;
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", calib::trace::kernel_class_name(c.kind),
                       cli::grouped_integer(c.kernels), ms(c.measured_us),
                       priced ? ms(c.priced_measured_us) : "-", priced ? ms(c.predicted_us) : "-",
                       priced ? percent_error(c.predicted_us, c.priced_measured_us) : "-");
  }
  if (!p.largest.empty()) {
    out +=
        "\nLargest priced kernels (us per call):\n\n"
        "| kernel | calls per step | measured | parasim | error |\n|---|---:|---:|---:|---:|\n";
    for (const auto& s : p.largest) {
      out += fmt::format("| {} | {} | {:.1f} | {:.1f} | {} |\n", s.what, s.calls, s.measured_us,
                         s.predicted_us, percent_error(s.predicted_us, s.measured_us));
    }
  }
  for (const auto& n : p.notes) out += "note: " + n + "\n";
  return out;
}

std::string format_trace_phases(const calib::trace::PhaseBreakdown& t,
                                const calib::trace::PhaseBreakdown& s) {
  std::string out =
      "\nThe step per phase (ms per step; the run: the mean of its ranks; parasim: the scenario "
      "simulated, its first GPU):\n\n"
      "| phase | run | parasim | parasim - run |\n|---|---:|---:|---:|\n";
  auto row = [&](const char* what, double run, double sim) {
    out += fmt::format("| {} | {} | {} | {:+.3f} |\n", what, ms(run), ms(sim), (sim - run) / 1e3);
  };
  for (int p = 0; p < calib::trace::kTracePhases; ++p) {
    const auto i = static_cast<std::size_t>(p);
    row(fmt::format("{} compute",
                    calib::trace::trace_phase_name(static_cast<calib::trace::TracePhase>(p)))
            .c_str(),
        t.phase_us[i], s.phase_us[i]);
  }
  row("all compute (union)", t.compute_us, s.compute_us);
  row("communication (all)", t.communication_us, s.communication_us);
  row("exposed communication", t.exposed_comm_us, s.exposed_comm_us);
  row("idle: host gaps and waits", t.idle_us, s.idle_us);
  row("step (GPU window)", t.window_us, s.window_us);
  out += fmt::format("\nstep time error: {}\n", percent_error(s.window_us, t.window_us));
  return out;
}

calib::trace::PhaseBreakdown mean_breakdown(const std::vector<calib::trace::PhaseBreakdown>& all) {
  if (all.empty()) throw std::invalid_argument("mean_breakdown: no breakdown");
  calib::trace::PhaseBreakdown m;
  m.steps = all.front().steps;
  const double n = static_cast<double>(all.size());
  for (const auto& b : all) {
    m.window_us += b.window_us / n;
    for (std::size_t p = 0; p < m.phase_us.size(); ++p) m.phase_us[p] += b.phase_us[p] / n;
    m.compute_us += b.compute_us / n;
    m.communication_us += b.communication_us / n;
    m.exposed_comm_us += b.exposed_comm_us / n;
    m.idle_us += b.idle_us / n;
  }
  return m;
}

}  // namespace parasim::report
