// libFuzzer harness for the profile parser (costmodel/profile.hpp, versions 1 and 2 with the
// measured tables): any bytes give a Profile or an InputError naming the file and each
// problem's JSON path (fuzz_check.hpp). An accepted profile also round-trips as
// costmodel/profile_writer.hpp promises: format_profile's text parses again, and formatting
// that gives the same bytes. Built with -DPARASIM_FUZZ=ON; run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/profile.hpp"
#include "costmodel/profile_writer.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parasim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  cost::Profile profile;
  try {
    profile = cost::parse_profile(text, fuzz::kFuzzFileName);
  } catch (const cost::InputError& e) {
    fuzz::check_input_error(e);
    return 0;
  } catch (...) {
    if (!fuzz::is_known_crash(std::current_exception())) throw;
    return 0;
  }
  const std::string written = cost::format_profile(profile);
  try {
    const cost::Profile again = cost::parse_profile(written, fuzz::kFuzzFileName);
    const std::string rewritten = cost::format_profile(again);
    fuzz::require(rewritten == written, "format_profile(parse_profile(written)) != written",
                  "written:\n" + written + "\nrewritten:\n" + rewritten);
  } catch (const cost::InputError& e) {
    fuzz::require(false, "the profile format_profile wrote does not parse",
                  "written:\n" + written + "\nproblems:\n" + e.what());
  }
  return 0;
}
