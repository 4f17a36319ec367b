#include "report/validation/validation_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>

#include "report/step_report.hpp"
#include "costmodel/profile_fit.hpp"
#include "sim/engine.hpp"
#include "sim/worker_threads.hpp"
#include "sim/time.hpp"

namespace parasim::validation {
namespace {

struct Outcome {
  CaseResult result;
  std::vector<std::string> warnings;
  std::string failure;        // empty: simulated (or not expressible)
  bool input_failure = true;  // the failure is the input's (exit 2), not parasim's (exit 1)
};

void simulate(const ValidationCase& c, const cost::Profile* profile, bool allow_foreign,
              Outcome& out) {
  const strat::Scenario& scenario = *c.scenario;
  if (profile != nullptr) cost::check_profile_fits(*profile, scenario.cluster, allow_foreign);
  const cost::CostModel costs = cost::make_cost_model(scenario.cluster, profile);
  const strat::BuiltWorkload built = strat::build_workload(scenario, costs, {});
  const sim::SimResult sim_result = sim::Engine(built.workload, {}).run();
  const strat::StepReport report = strat::make_step_report(scenario, built, sim_result);
  CaseResult& r = out.result;
  r.simulated = true;
  r.measured_s = *c.measured_step_time_s;
  r.predicted_s = report.step_time_s;
  r.signed_error = (r.predicted_s - r.measured_s) / r.measured_s;
  const double per_step = 1.0 / report.steps_simulated;
  for (const auto& [category, seconds] : report.critical_path_s) {
    r.breakdown.critical_path_s.emplace_back(category, seconds * per_step);
  }
  r.breakdown.exposed_comm_s = report.exposed_comm_s;
  double bubble = 0;
  for (double b : report.bubble_fraction) bubble += b;
  if (!report.bubble_fraction.empty()) bubble /= static_cast<double>(report.bubble_fraction.size());
  r.breakdown.bubble_fraction = bubble;
  r.breakdown.mfu = report.mfu;
  r.breakdown.host_busy_s = report.host_busy_s;
  for (const auto& m : report.memory) {
    r.predicted_memory_bytes = std::max(r.predicted_memory_bytes, m.peak_bytes);
  }
  if (c.measured_peak_memory_bytes) {
    r.memory_measured = true;
    r.measured_memory_bytes = *c.measured_peak_memory_bytes;
    r.memory_signed_error = (r.predicted_memory_bytes - r.measured_memory_bytes) /
                            r.measured_memory_bytes;
  }
  out.warnings = costs.warnings().list();
}

void run_one(const ValidationFile& file, const ValidationCase& c, const RunOptions& options,
             Outcome& out) {
  const std::string where = fmt::format("{}: /cases/{}: case \"{}\": ", file.path, c.index, c.id);
  try {
    if (c.expressible()) {
      simulate(c, options.profile != nullptr ? options.profile : file.profile.get(),
               options.allow_foreign_profile, out);
    } else {
      out.result.measured_s =
          c.measured_step_time_s.value_or(std::numeric_limits<double>::quiet_NaN());
    }
  } catch (const cost::InputError& e) {  // the profile does not describe the case's device
    out.failure = where + "its profile does not fit:\n" + e.what();
  } catch (const sim::TimeRangeError& e) {
    out.failure = where + e.what() + "; check the scenario's and the profile's hardware figures\n";
  } catch (const std::length_error& e) {
    out.failure = where + e.what() + "\n";
  } catch (const std::exception& e) {
    out.failure = where + "internal error, the case cannot be simulated: " + e.what() + "\n";
    out.input_failure = false;
  }
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> select_cases(
    const std::vector<ValidationFile>& files, const std::string& filter) {
  std::vector<std::pair<std::size_t, std::size_t>> selection;
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (std::size_t i = 0; i < files[f].cases.size(); ++i) {
      const ValidationCase& c = files[f].cases[i];
      const auto has = [&](const std::string& s) { return s.find(filter) != std::string::npos; };
      if (filter.empty() || has(c.id) || has(c.family) || has(files[f].name)) {
        selection.emplace_back(f, i);
      }
    }
  }
  return selection;
}

RunOutput run_cases(const std::vector<ValidationFile>& files,
                    const std::vector<std::pair<std::size_t, std::size_t>>& selection,
                    const RunOptions& options) {
  std::vector<Outcome> outcomes(selection.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  const auto worker = [&] {
    for (std::size_t k = next++; k < selection.size(); k = next++) {
      const auto [f, i] = selection[k];
      outcomes[k].result.file = f;
      outcomes[k].result.index = i;
      run_one(files[f], files[f].cases[i], options, outcomes[k]);
      const std::size_t finished = ++done;
      if (options.progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(finished, selection.size());
      }
    }
  };
  const int threads = std::max(1, options.threads);
  sim::run_workers(threads, [&worker](int) { worker(); });

  RunOutput out;
  std::string failures;
  bool all_input = true;
  std::map<std::string, std::size_t> warning_cases;
  for (Outcome& o : outcomes) {
    if (!o.failure.empty()) {
      failures += o.failure;
      all_input = all_input && o.input_failure;
    }
    for (const std::string& w : o.warnings) ++warning_cases[w];
    out.results.push_back(std::move(o.result));
  }
  if (!failures.empty()) throw RunError(failures, all_input ? 2 : 1);
  for (const auto& [text, cases] : warning_cases) {
    out.warnings.push_back(fmt::format("{} case{}: {}", cases, cases == 1 ? "" : "s", text));
  }
  return out;
}

}  // namespace parasim::validation
