// plan (cli/runs/plan_run.hpp: the steps of `parasim plan` on one process) with a progress
// callback into Python, and export (planner/export/: what `parasim export` writes).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "cli/runs/plan_run.hpp"
#include "planner/export/export_context.hpp"
#include "planner/export/export_input.hpp"
#include "planner/export/exporter.hpp"
#include "python/src/bindings.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

// The planner calls its progress function from its worker 0, which runs on the thread that
// called plan (sim/worker_threads.hpp), after each block of candidates and each simulation. The
// relay takes the GIL and runs the Python callback when there is one; on the interpreter's main
// thread it also checks for a signal (Ctrl-C), at most every kSignalCheckInterval when there is
// no callback. The first Python exception, from either, is kept and the relay throws
// PlanStopped: the planner's workers stop after their current block or simulation, and the
// caller raises the kept exception once the planner has returned. The planner copies only the
// pointer to the relay. Once the interpreter has begun to exit (an atexit hook sets
// g_interpreter_exiting), the relay never takes the GIL: a plan left running in a daemon thread
// goes on without Python until the process ends, instead of being killed inside the planner.
std::atomic<bool> g_interpreter_exiting{false};
constexpr auto kSignalCheckInterval = std::chrono::milliseconds(50);

struct PlanStopped : std::runtime_error {
  PlanStopped() : std::runtime_error("the plan was stopped from Python") {}
};

struct ProgressRelay {
  nb::object callback;  // None: only the signal check
  bool check_signals = false;
  std::optional<nb::python_error> error;
  std::chrono::steady_clock::time_point last_check{};

  bool wanted() const { return !callback.is_none() || check_signals; }

  void operator()(const char* tier, std::uint64_t done, std::uint64_t total) {
    if (g_interpreter_exiting.load()) return;
    const auto now = std::chrono::steady_clock::now();
    if (callback.is_none() && now - last_check < kSignalCheckInterval) return;
    last_check = now;
    nb::gil_scoped_acquire acquire;
    if (error) throw PlanStopped();
    try {
      if (check_signals && PyErr_CheckSignals() != 0) throw nb::python_error();
      if (!callback.is_none()) callback(tier, done, total);
    } catch (nb::python_error& e) {
      error.emplace(std::move(e));
      throw PlanStopped();
    }
  }
};

struct PlanArguments {
  std::string trainer;  // "" or megatron, deepspeed, torchtitan
  std::vector<std::string> search;
  bool allow_async = false;
  int gpus = 0;
  double max_candidates = 4e8;
  int top = 16;
  int max_simulate = 64;
  double headroom = 0.05;
  int threads = 0;
  std::optional<std::size_t> keep;  // keep the screened candidates (0: all)
  double tie_percent = -1;
  std::string command_line;
};

// (ranked, table text, candidates JSON, plan file JSON ("" when none ranked), why none ranked,
// the profile's warnings).
using PlanOutcome =
    std::tuple<int, std::string, std::string, std::string, std::string, std::vector<std::string>>;

PlanOutcome run_plan(const std::string& name, const std::optional<std::string>& text,
                     const std::optional<std::string>& profile_name,
                     const std::optional<std::string>& profile_text, bool allow_foreign_profile,
                     const PlanArguments& a, nb::object progress, bool check_signals) {
  cli::PlanCommandOptions o;
  o.scenario = name;
  o.profile = profile_name.value_or("");
  o.trainer = a.trainer;
  o.search = a.search;
  o.allow_async = a.allow_async;
  o.gpus = a.gpus;
  o.max_candidates = a.max_candidates;
  o.top = a.top;
  o.max_simulate = a.max_simulate;
  o.headroom = a.headroom;
  o.threads = a.threads;
  o.json = a.keep ? "-" : "";  // keep the screened candidates, as --json does
  o.keep = a.keep.value_or(0);
  o.tie_percent = a.tie_percent;
  o.command_line = a.command_line;
  o.progress = false;
  ProgressRelay relay{std::move(progress), check_signals, std::nullopt, {}};
  PlanOutcome outcome;
  try {
    nb::gil_scoped_release release;
    naming_time_errors(name, [&] {
      const strat::ScenarioFile file = read_scenario({name, text}, cli::plan_scenario_limits());
      cli::PlanSetup setup = cli::prepare_plan(file, o);
      std::vector<std::string> warnings;
      const std::optional<cost::Profile> profile = read_checked_profile(
          profile_name, profile_text, setup.question.base.cluster, allow_foreign_profile, warnings);
      cli::add_plan_costs(setup, profile ? &*profile : nullptr);
      plan::PlanOptions po = cli::plan_options(setup, o, 1);
      if (relay.wanted()) {
        ProgressRelay* r = &relay;
        po.progress = [r](const char* tier, std::uint64_t done, std::uint64_t total) {
          (*r)(tier, done, total);
        };
      }
      const plan::PlanResult result =
          plan::run_plan(setup.question.base, setup.space, setup.costs.view, po);
      outcome = {result.ranked,
                 cli::plan_text(setup, file, result, o),
                 cli::plan_candidates_text(setup, result),
                 result.ranked > 0 ? cli::plan_file_text(setup, result, o) : std::string(),
                 result.ranked > 0 ? std::string() : cli::no_plan_line(setup, result),
                 std::move(warnings)};
    });
  } catch (const PlanStopped&) {
    if (relay.error) throw std::move(*relay.error);
    throw;
  }
  return outcome;
}

// (configuration text, the trainer's label, notes, differences) as `parasim export` writes them.
std::tuple<std::string, std::string, std::vector<std::string>, std::vector<std::string>>
export_plan(const std::string& name, const std::optional<std::string>& text, const std::string& to,
            const std::string& version, bool json, bool allow_approximate) {
  nb::gil_scoped_release release;
  exporter::ExportOptions options;
  if (!exporter::target_from_name(to, &options.target)) {
    throw cli::CommandLineError("to must be megatron, deepspeed, torchtitan or shampoo, not \"" +
                                to + "\"");
  }
  options.version = version;
  options.json = json;
  options.allow_approximate = allow_approximate;
  const exporter::ExportInput input = read_scenario({name, text});
  exporter::ExportResult result;
  try {
    result = exporter::export_scenario(input, options);
  } catch (const std::invalid_argument& e) {
    throw cli::CommandLineError(e.what());
  }
  std::vector<std::string> differences;
  for (const exporter::Difference& d : result.differences) {
    differences.push_back(exporter::difference_text(d, result.target_label));
  }
  return {std::move(result.text), std::move(result.target_label), std::move(result.notes),
          std::move(differences)};
}

}  // namespace

void bind_plan(nb::module_& m) {
  // Before the interpreter finalizes (atexit hooks run first), stop relaying.
  nb::module_::import_("atexit").attr("register")(
      nb::cpp_function([] { g_interpreter_exiting.store(true); }));
  nb::class_<PlanArguments>(m, "PlanArguments", "plan's options, as parasim plan takes them.")
      .def(nb::init<>())
      .def_rw("trainer", &PlanArguments::trainer)
      .def_rw("search", &PlanArguments::search)
      .def_rw("allow_async", &PlanArguments::allow_async)
      .def_rw("gpus", &PlanArguments::gpus)
      .def_rw("max_candidates", &PlanArguments::max_candidates)
      .def_rw("top", &PlanArguments::top)
      .def_rw("max_simulate", &PlanArguments::max_simulate)
      .def_rw("headroom", &PlanArguments::headroom)
      .def_rw("threads", &PlanArguments::threads)
      .def_rw("keep", &PlanArguments::keep)
      .def_rw("tie_percent", &PlanArguments::tie_percent)
      .def_rw("command_line", &PlanArguments::command_line);
  m.def("plan", &run_plan, nb::arg("name"), nb::arg("text").none(), nb::arg("profile_name").none(),
        nb::arg("profile_text").none(), nb::arg("allow_foreign_profile"), nb::arg("arguments"),
        nb::arg("progress").none(), nb::arg("check_signals"),
        "Plans on one process; raises parasim.errors.ScenarioError on bad input.");
  m.def("export", &export_plan, nb::arg("name"), nb::arg("text").none(), nb::arg("to"),
        nb::arg("version"), nb::arg("json"), nb::arg("allow_approximate"),
        "A scenario or plan as a trainer's configuration.");
}

}  // namespace parasim::python
