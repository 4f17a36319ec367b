// `parasim calibrate`: measure this machine and write a profile (docs/profile.md), or check a
// profile against held-out measurements.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/check.hpp"
#include "sim/time.hpp"
#include "calibrate/cpu_backend.hpp"
#include "calibrate/cuda_plugin.hpp"
#include "calibrate/harness.hpp"
#include "cli/calibrate_summary.hpp"
#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/profile_writer.hpp"
#include "kernels/gpu_error.hpp"

namespace parasim::cli {
namespace {

// nccl-tests' size syntax: a number with an optional K, M or G suffix (powers of 1024).
double parse_size(const std::string& text, const char* flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double unit = 1;
  if (used > 0 && used + 1 == text.size()) {
    switch (text.back()) {
      case 'K': case 'k': unit = 1024.0; break;
      case 'M': case 'm': unit = 1024.0 * 1024; break;
      case 'G': case 'g': unit = 1024.0 * 1024 * 1024; break;
      default: used = 0;
    }
  } else if (used != text.size()) {
    used = 0;
  }
  if (used == 0 || !(value > 0)) {
    throw std::invalid_argument(fmt::format(
        "{} '{}': expected a positive size in bytes, optionally with K, M or G (1024-based), "
        "e.g. 8, 64K, 128M, 1G", flag, text));
  }
  return value * unit;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

calib::SweepOptions sweep_options(const CalibrateOptions& o) {
  calib::SweepOptions s;
  s.quick = o.quick;
  if (!o.ops.empty()) s.ops = calib::parse_op_families(o.ops);
  if (!o.min_bytes.empty()) s.min_bytes = parse_size(o.min_bytes, "-b");
  if (!o.max_bytes.empty()) s.max_bytes = parse_size(o.max_bytes, "-e");
  if (o.factor > 0) s.factor = o.factor;
  if (s.factor && *s.factor <= 1) {
    throw std::invalid_argument(fmt::format("-f must be > 1, got {}", *s.factor));
  }
  if (s.min_bytes && s.max_bytes && *s.max_bytes < *s.min_bytes) {
    throw std::invalid_argument(fmt::format("-e ({}) is below -b ({})", o.max_bytes, o.min_bytes));
  }
  return s;
}

std::unique_ptr<calib::MeasurementBackend> make_backend(const std::string& name,
                                                        const calib::ProcessGroup& group) {
  if (name == "cpu") return std::make_unique<calib::CpuBackend>(group);
  return calib::make_cuda_backend(group);
}

// Writes the profile (rewritten after every point for a regular file: a valid file of what was
// measured, marked incomplete until the end).
void write_tables(const std::string& path, const cost::MeasuredTables& tables,
                  std::ostream& standard_output) {
  cost::Profile profile;
  profile.source = fmt::format("parasim calibrate ({} backend) on {}, {}",
                               tables.provenance.backend, tables.provenance.device,
                               tables.provenance.date);
  profile.measured = tables;
  OutputFile file(path);
  file.stage(cost::format_profile(profile));
  file.commit(standard_output);
}

// Why a family asked for has no point in the plan, e.g. "launch: the cpu backend does not
// measure launch overhead"; empty when every family asked for has points.
std::vector<std::string> families_without_points(const calib::MeasurementBackend& backend,
                                                 const calib::ProcessGroup& group,
                                                 const calib::SweepOptions& sweep,
                                                 const calib::SweepPlan& plan) {
  using calib::OpFamily;
  const std::string name = backend.name();
  std::vector<std::string> why;
  auto add = [&](OpFamily family, bool empty, const std::string& reason) {
    if (sweep.ops.count(family) > 0 && empty) {
      why.push_back(std::string(calib::op_family_name(family)) + ": " + reason);
    }
  };
  add(OpFamily::kGemm, plan.gemms.empty(), "the " + name + " backend has no GEMM data type");
  add(OpFamily::kCollectives, plan.collectives.empty(),
      !group.has_mpi()
          ? group.no_mpi_reason()
          : "one rank has no collectives to time (run under mpirun -np N, N >= 2)");
  add(OpFamily::kSolvers, plan.solvers.empty(),
      "the " + name + " backend runs none of the inverse-root solvers");
  add(OpFamily::kNorm, plan.norms.empty(), "no RMSNorm shape to measure");
  add(OpFamily::kLaunch, !plan.launch,
      "the " + name + " backend does not measure kernel launch overhead (the cuda backend does)");
  add(OpFamily::kOverlap, plan.overlaps.empty(),
      backend.has_overlap() ? std::string("no overlap case to measure")
                            : "the " + name + " backend does not measure compute/communication "
                              "overlap here (the cuda backend does, with 2 or more GPUs)");
  return why;
}

}  // namespace

int run_calibrate(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.from_trace.empty()) return run_calibrate_from_trace(o, out, err);
  if (o.gpus_per_node != 0) {
    err << "parasim calibrate: --gpus-per-node goes with --from-trace\n";
    return kExitBadInput;
  }
  calib::SweepOptions sweep;
  try {
    sweep = sweep_options(o);
    if (o.backend != "cuda" && o.backend != "cpu") {
      throw std::invalid_argument("--backend must be cuda or cpu, got '" + o.backend + "'");
    }
    if (o.out.empty() == o.check.empty()) {
      throw std::invalid_argument(
          "give exactly one of --out FILE (measure and write a profile) and --check PROFILE "
          "(measure held-out points and compare them with the profile's predictions)");
    }
    if (o.iterations < 1 || o.warmup < 0) {
      throw std::invalid_argument("-n must be >= 1 and -w >= 0");
    }
  } catch (const std::invalid_argument& e) {
    err << "parasim calibrate: " << e.what() << "\n";
    return kExitBadInput;
  }
  cost::Profile checked;
  if (!o.check.empty()) {
    try {
      check_input_file(o.check);
      checked = cost::load_profile(o.check);
      for (const auto& w : profile_warnings(checked, o.check)) err << "warning: " << w << "\n";
    } catch (const cost::InputError& e) {
      err << e.what();
      return kExitBadInput;
    } catch (const sim::TimeRangeError& e) {
      err << cost::printable(o.check) << ": " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  std::unique_ptr<calib::ProcessGroup> group_of_run;
  try {
    group_of_run = calib::open_process_group();
  } catch (const calib::ProcessGroupUnavailable& e) {
    err << "parasim calibrate: cannot start the process group: " << e.what() << "\n";
    return kExitNoDevice;
  } catch (const std::exception& e) {
    err << "parasim calibrate: cannot start the process group: " << e.what() << "\n";
    return kExitFailure;
  }
  const calib::ProcessGroup& group = *group_of_run;
  const bool root = group.rank() == 0;
  std::FILE* progress_stream = root ? stderr : nullptr;
  // Rank 0 writes the profile; every rank learns whether it can, so that none starts measuring
  // (and waits in a collective) when the others stop.
  bool profile_on_stdout = false;
  bool rewrite_after_each_point = true;
  if (o.check.empty()) {
    std::string refused;
    if (root) {
      try {
        const OutputFile target(o.out);
        target.check_target();
        profile_on_stdout = target.is_stdout();
        // A device, a pipe or standard output gets the profile once, at the end.
        rewrite_after_each_point = target.replaces_file();
      } catch (const OutputError& e) {
        refused = e.what();
      }
    }
    if (!group.all(refused.empty())) {
      if (root) err << "parasim calibrate --out: " << refused << "\n";
      return kExitBadInput;
    }
  }
  bool profile_written = false;
  try {
    std::unique_ptr<calib::MeasurementBackend> backend;
    try {
      backend = make_backend(o.backend, group);
    } catch (const kernels::GpuUnavailable& e) {
      if (root) {
        err << "parasim calibrate: no GPU to calibrate: " << e.what()
            << " (use --backend cpu to calibrate the CPU instead)\n";
      }
      return kExitNoDevice;
    }
    kernels::TimingOptions timing;
    timing.iterations = o.iterations;
    timing.warmup = o.warmup;
    if (!o.check.empty()) {
      const calib::SweepPlan plan = calib::make_check_plan(*backend, sweep);
      if (plan.size() == 0) {
        std::string why;
        for (const auto& w : families_without_points(*backend, group, sweep, plan)) why += "; " + w;
        if (root) err << "parasim calibrate --check: nothing to measure" << why << "\n";
        return kExitBadInput;
      }
      calib::Progress progress(progress_stream, calib::stream_is_terminal(progress_stream),
                               plan.size());
      const calib::CheckReport report =
          calib::check_profile(*backend, group, checked, plan, timing, progress);
      if (root) out << calib::format_check_report(report);
      return kExitOk;
    }
    const calib::SweepPlan plan = calib::make_sweep_plan(*backend, sweep);
    const std::vector<std::string> unmeasured = families_without_points(*backend, group, sweep, plan);
    if (plan.size() == 0) {
      if (root) {
        err << "parasim calibrate: nothing to measure, so no profile is written:\n";
        for (const auto& w : unmeasured) err << "  " << w << "\n";
        err << "(--ops chooses among gemm, collectives, solvers, norm, launch, overlap)\n";
      }
      return kExitBadInput;
    }
    cost::Provenance provenance = backend->provenance();
    provenance.date = utc_now();
    provenance.command_line = o.command_line;
    provenance.parasim_version = PARASIM_VERSION;
    if (root) {
      err << fmt::format("calibrating {} ({} backend, {} rank{} on {} node{}): {} points -> {}\n",
                         provenance.device, backend->name(), group.size(),
                         group.size() == 1 ? "" : "s", group.nodes(), group.nodes() == 1 ? "" : "s",
                         plan.size(), o.out);
      for (const auto& w : unmeasured) err << "note: not measured: " << w << "\n";
    }
    calib::Progress progress(progress_stream, calib::stream_is_terminal(progress_stream),
                             plan.size());
    const cost::MeasuredTables tables = calib::run_calibration(
        *backend, group, plan, timing, provenance, progress, [&](const cost::MeasuredTables& t) {
          if (!rewrite_after_each_point) return;
          write_tables(o.out, t, out);
          profile_written = true;
        });
    if (root && !rewrite_after_each_point) write_tables(o.out, tables, out);
    if (root) print_calibrate_summary(profile_on_stdout ? stderr : stdout, tables, o.out);
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    if (root) err << "parasim calibrate: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    if (root) {
      err << "parasim calibrate: " << e.what() << "\n";
      if (o.check.empty()) {
        err << (profile_written
                    ? "(" + o.out + " holds what was measured, marked incomplete)\n"
                    : "(nothing was written to " + o.out + ")\n");
      }
    }
    return kExitFailure;
  }
}

}  // namespace parasim::cli
