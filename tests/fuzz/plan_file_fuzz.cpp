// libFuzzer harness for scenario and plan files (strategies/input/scenario_file.hpp), what
// simulate, validate, plan, compare and export read: any bytes give a scenario (a plan's embedded
// one included) that passes check_scenario again, or an InputError naming the file and each
// problem's JSON path (fuzz_check.hpp), a plan's under /scenario. Built with -DPARASIM_FUZZ=ON; run
// by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "strategies/input/scenario_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parasim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const strat::ScenarioFile file = strat::parse_scenario_file(text, fuzz::kFuzzFileName);
    cost::Diagnostics again(fuzz::kFuzzFileName);
    strat::check_scenario(file.scenario, again);
    fuzz::require(again.ok(), "a parsed scenario or plan fails check_scenario", again.to_string());
    fuzz::require(file.document.is_object(), "the scenario document is not an object");
  } catch (const cost::InputError& e) {
    fuzz::check_input_error(e);
  } catch (...) {
    if (!fuzz::is_known_crash(std::current_exception())) throw;
  }
  return 0;
}
