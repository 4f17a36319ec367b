// libFuzzer harness for the scenario parser (strategies/input/scenario_parser.hpp): any bytes give a
// Scenario that passes its own cross-field rules again, or an InputError naming the file and
// each problem's JSON path (fuzz_check.hpp). Built with -DPARASIM_FUZZ=ON; run by
// scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "strategies/input/scenario_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parasim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const strat::Scenario scenario = strat::parse_scenario(text, fuzz::kFuzzFileName);
    // parse_scenario ran check_scenario before returning: running it again finds nothing.
    cost::Diagnostics again(fuzz::kFuzzFileName);
    strat::check_scenario(scenario, again);
    fuzz::require(again.ok(), "a parsed scenario fails check_scenario", again.to_string());
  } catch (const cost::InputError& e) {
    fuzz::check_input_error(e);
  } catch (...) {
    if (!fuzz::is_known_crash(std::current_exception())) throw;
  }
  return 0;
}
