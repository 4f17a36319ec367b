// libFuzzer harness for validation files (report/validation/validation_file.hpp): any bytes give
// a validation file whose cases are each a valid scenario or a not-expressible reason, or an
// InputError naming the file and each problem's JSON path (fuzz_check.hpp). Built with
// -DPARASIM_FUZZ=ON; run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "report/validation/validation_file.hpp"
#include "strategies/input/scenario_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parasim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const validation::ValidationFile file =
        validation::parse_validation_file(text, fuzz::kFuzzFileName);
    for (const auto& c : file.cases) {
      if (!c.expressible()) continue;
      cost::Diagnostics again(fuzz::kFuzzFileName);
      strat::check_scenario(*c.scenario, again);
      fuzz::require(again.ok(), "a case's parsed scenario fails check_scenario",
                    again.to_string());
    }
  } catch (const cost::InputError& e) {
    fuzz::check_input_error(e);
  } catch (...) {
    if (!fuzz::is_known_crash(std::current_exception())) throw;
  }
  return 0;
}
