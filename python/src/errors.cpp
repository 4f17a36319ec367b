// C++ exceptions as the Python exceptions of python/parasim/errors.py, each with the message the
// command would print: a bad input (cost::InputError, exit code 2 on the command line) is a
// ScenarioError carrying every problem with its JSON path; a time beyond the engine's range
// (sim::TimeRangeError, named by the input it came from where known) is bad input too; a wrong
// argument is a ValueError; a broken invariant (sim::WorkloadError) a SimulationError; the rest
// take nanobind's defaults (std::invalid_argument a ValueError, std::bad_alloc a MemoryError,
// any other std::exception a RuntimeError).
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "costmodel/diagnostics.hpp"
#include "python/src/bindings.hpp"
#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

nb::object error_class(const char* name) {
  return nb::module_::import_("parasim.errors").attr(name);
}

void set_error(const char* name, const nb::tuple& args) {
  PyErr_SetObject(error_class(name).ptr(), args.ptr());
}

// ScenarioError(message, file, [(path, message), ...]).
void set_scenario_error(const std::string& message, const std::string& file,
                        const nb::list& problems) {
  set_error("ScenarioError", nb::make_tuple(message, file, problems));
}

void set_single_problem(const std::string& message) {
  nb::list problems;
  problems.append(nb::make_tuple("/", message));
  set_scenario_error(message, "", problems);
}

void translate(const std::exception_ptr& p, void* /*payload*/) {
  try {
    std::rethrow_exception(p);
  } catch (const cost::InputError& e) {
    nb::list problems;
    for (const cost::Problem& problem : e.diagnostics().problems()) {
      problems.append(
          nb::make_tuple(problem.json_path.empty() ? "/" : problem.json_path, problem.message));
    }
    set_scenario_error(e.what(), e.diagnostics().file(), problems);
  } catch (const NamedTimeRangeError& e) {
    const std::string message = std::string(e.what()) + cli::kTimeRangeHint;
    nb::list problems;
    problems.append(nb::make_tuple("/", message));
    set_scenario_error(cost::printable(e.name) + ": " + message, cost::printable(e.name), problems);
  } catch (const sim::TimeRangeError& e) {
    set_single_problem(std::string(e.what()) + cli::kTimeRangeHint);
  } catch (const sim::WorkloadError& e) {
    set_error("SimulationError",
              nb::make_tuple(std::string("internal error, the generated workload cannot run: ") +
                             e.what()));
  } catch (const cli::CommandLineError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& /*m*/) {
  nb::register_exception_translator(translate);
}

}  // namespace parasim::python
