// `parasim calibrate --from-trace TRACE... --out PROFILE`: profiler traces of a real run read,
// classified and fitted into a version 2 profile's measured tables (calibrate/trace/), with what
// they cover printed (docs/calibration.md#from-a-trace).
#include <fmt/format.h>

#include <ctime>
#include <string>
#include <vector>

#include "calibrate/trace/trace_file.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/profile_writer.hpp"
#include "report/trace/trace_text.hpp"

namespace parasim::cli {
namespace {

// The trace's own date (Kineto's baseTimeNanoseconds), so that the same traces give the same
// bytes; "" when the trace has none.
std::string trace_date(const calib::trace::RankTrace& rank) {
  if (!rank.base_time_ns) return "";
  const std::time_t seconds = static_cast<std::time_t>(*rank.base_time_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

int run_calibrate_from_trace(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  if (o.out.empty()) {
    err << "parasim calibrate --from-trace: give --out FILE, the profile to write\n";
    return kExitBadInput;
  }
  try {
    OutputFile file(o.out);
    file.check_target();
    std::vector<calib::trace::RankTrace> ranks;
    for (const std::string& path : o.from_trace) {
      for (auto& r : calib::trace::read_trace_file(path)) ranks.push_back(std::move(r));
    }
    calib::trace::TraceFitOptions options;
    options.gpus_per_node = o.gpus_per_node;
    calib::trace::TraceFit fit = calib::trace::fit_traces(ranks, options);
    if (fit.tables.gemm.empty() && fit.tables.collectives.empty() && fit.tables.norms.empty()) {
      err << report::format_trace_coverage(fit)
          << "parasim calibrate --from-trace: nothing could be fitted (no GEMM or norm call with "
             "input shapes, no collective with the profiler's metadata), so no profile is "
             "written\n";
      return kExitBadInput;
    }
    cost::Provenance& p = fit.tables.provenance;
    p.backend = "trace";
    p.device = ranks.front().device;
    p.device_count = static_cast<int>(ranks.size());
    p.ranks = static_cast<int>(ranks.size());
    p.nodes = 0;
    p.date = trace_date(ranks.front());
    p.command_line = o.command_line;
    p.parasim_version = PARASIM_VERSION;
    cost::Profile profile;
    profile.source = fmt::format(
        "parasim calibrate --from-trace: {} of {}",
        ranks.size() == 1 ? std::string("1 rank") : fmt::format("{} ranks", ranks.size()),
        p.device.empty() ? std::string("an unnamed GPU") : p.device);
    profile.measured = fit.tables;
    file.stage(cost::format_profile(profile));
    file.commit(out);
    std::ostream& text = file.is_stdout() ? err : out;
    text << report::format_trace_coverage(fit);
    text << fmt::format("profile: {} ({} GEMM points, {} collective series, {} norm points)\n",
                        file.is_stdout() ? std::string("standard output") : cost::printable(o.out),
                        fit.tables.gemm.size(), fit.tables.collectives.size(),
                        fit.tables.norms.size());
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    err << "parasim calibrate --from-trace: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "parasim calibrate --from-trace: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
