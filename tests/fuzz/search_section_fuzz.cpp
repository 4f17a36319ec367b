// libFuzzer harness for the planner's search section (planner/search_space.hpp): any bytes, read
// as the scenario's "search" object, give a space of at most --max-candidates candidates whose
// every index decodes, or an InputError naming the file and each problem's JSON path
// (fuzz_check.hpp). The base scenario is fixed (Llama 2 7B on one DGX H100); bytes that are not
// JSON test nothing here (the scenario harnesses cover the reader). Built with -DPARASIM_FUZZ=ON;
// run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fuzz_check.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace {

const parasim::strat::Scenario& base() {
  static const parasim::strat::Scenario s = parasim::strat::parse_scenario(
      R"({"name": "fuzz", "model": "llama2-7b", "cluster": {"preset": "dgx-h100", "nodes": 4},
          "training": {"global_batch": 256, "micro_batch": 1},
          "parallel": {"dp": 32}, "optimizer": {"name": "adamw"}})",
      "fuzz-base.json");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parasim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cost::Diagnostics ignored(fuzz::kFuzzFileName);
  const std::optional<nlohmann::json> search = cost::parse_json_document(text, ignored);
  if (!search) return 0;
  plan::SearchOptions options;
  options.max_candidates = 1e6;
  try {
    const plan::SearchSpace space =
        plan::make_search_space(base(), &*search, options, fuzz::kFuzzFileName);
    const std::uint64_t n = space.size();
    fuzz::require(n >= 1 && static_cast<double>(n) <= options.max_candidates,
                  "a space outside [1, max_candidates]");
    for (std::uint64_t i : {std::uint64_t{0}, n / 2, n - 1}) {
      const plan::Candidate c = space.decode(i);
      fuzz::require(c.dp * c.tp * c.pp * c.cp == c.gpus, "a decoded layout does not use its GPUs");
    }
  } catch (const cost::InputError& e) {
    fuzz::check_input_error(e);
  } catch (...) {
    if (!fuzz::is_known_crash(std::current_exception())) throw;
  }
  return 0;
}
