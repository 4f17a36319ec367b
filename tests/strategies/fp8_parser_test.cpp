// training.precision "fp8" and training.fp8 as the scenario parser and the precision entries'
// rules read them: every problem with its JSON path, at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "parser_problems.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::strat {
namespace {

std::string scenario_text(const std::string& cluster, const std::string& training,
                          const std::string& parallel = R"({"dp": 8})") {
  return R"({"model": "llama2-7b", "cluster": )" + cluster +
         R"(, "training": {"global_batch": 8, "micro_batch": 1, )" + training +
         R"(}, "parallel": )" + parallel + "}";
}

std::vector<cost::Problem> problems_of(const std::string& text) {
  return test::problems_of(text, "fp8.json");
}
using test::has_problem;

}  // namespace

TEST_CASE("precision fp8: Megatron's default recipe, and the options read") {
  const Scenario plain =
      parse_scenario(scenario_text(R"("dgx-h100")", R"("precision": "fp8")"), "fp8.json");
  CHECK(plain.training.precision == cost::Dtype::kBf16);
  CHECK(plain.training.fp8.recipe == cost::QuantRecipe::kDelayed);
  CHECK(plain.training.precision_name() == "fp8:delayed");
  const Scenario s = parse_scenario(
      scenario_text(R"("dgx-b200")",
                    R"("precision": "fp8", "fp8": {"recipe": "mxfp8", "format": "e4m3",
                        "bf16_layers_at_start": 1, "bf16_layers_at_end": 2})"),
      "fp8.json");
  CHECK(s.training.fp8.recipe == cost::QuantRecipe::kMxfp8);
  CHECK(s.training.fp8.format == Fp8Format::kE4m3);
  CHECK(s.training.fp8.bf16_layers_at_end == 2);
  CHECK_FALSE(s.training.fp8_layer(0, 32));
  CHECK(s.training.fp8_layer(29, 32));
  CHECK_FALSE(s.training.fp8_layer(30, 32));
  const Scenario rowwise = parse_scenario(
      scenario_text(R"("dgx-h100")", R"("precision": "fp8", "fp8": {"recipe": "torchao-rowwise"})"),
      "fp8.json");
  CHECK(rowwise.training.fp8.format == Fp8Format::kE4m3);  // torchao's rowwise is e4m3
}

TEST_CASE("FP8 problems: every one at once, each at its path") {
  // MXFP8 on Hopper; delayed scaling with bf16 layers; more bf16 layers than a stage holds;
  // --fp8-param-gather without the distributed optimizer.
  auto p = problems_of(
      scenario_text(R"("dgx-h100")",
                    R"("precision": "fp8", "fp8": {"recipe": "mxfp8", "param_gather": true,
          "bf16_layers_at_end": 40})"));
  CHECK(has_problem(p, "/training/fp8/recipe", "MXFP8 needs block-scaled tensor cores"));
  CHECK(has_problem(p, "/training/fp8/bf16_layers_at_end", "at most layers / pp"));
  CHECK(has_problem(p, "/training/fp8/param_gather", "zero_stage 1 or 2"));
  p = problems_of(
      scenario_text(R"("dgx-h100")", R"("precision": "fp8", "fp8": {"bf16_layers_at_start": 1})"));
  CHECK(has_problem(p, "/training/fp8/recipe", "delayed scaling does not support bf16"));
  // No FP8 on A100; options without precision fp8; an unknown recipe; torchao's fixed format.
  p = problems_of(scenario_text(R"("dgx-a100-80gb")", R"("precision": "fp8")"));
  CHECK(has_problem(p, "/training/precision", "no fp8 peak FLOP rate"));
  CHECK(has_problem(p, "/training/fp8/recipe", "FP8 needs compute capability 8.9+"));
  p = problems_of(scenario_text(R"("dgx-h100")", R"("fp8": {"recipe": "delayed"})"));
  CHECK(has_problem(p, "/training/fp8", "applies with \"precision\": \"fp8\""));
  p = problems_of(
      scenario_text(R"("dgx-h100")", R"("precision": "fp8", "fp8": {"recipe": "fp4-magic"})"));
  CHECK(has_problem(p, "/training/fp8/recipe", "expected one of"));
  p = problems_of(scenario_text(R"("dgx-h100")",
                                R"("precision": "fp8", "fp8": {"recipe": "torchao-rowwise",
                           "format": "hybrid", "param_gather": true})",
                                R"({"dp": 8, "zero_stage": 3})"));
  CHECK(has_problem(p, "/training/fp8/format", "fixes the format to e4m3"));
  CHECK(has_problem(p, "/training/fp8/param_gather", "torchao-tensorwise recipe only"));
  // NVFP4 is refused with its reason, not as an unknown word.
  p = problems_of(scenario_text(R"("dgx-b200")", R"("precision": "nvfp4")"));
  CHECK(has_problem(p, "/training/precision", "nvfp4 is not modelled"));
  CHECK_FALSE(has_problem(p, "/training/precision", "expected one of"));
  // A custom device without an architecture runs no block-scaled recipe.
  p = problems_of(scenario_text(R"({"preset": "dgx-h100", "device": {"architecture": "unknown"}})",
                                R"("precision": "fp8", "fp8": {"recipe": "blockwise"})"));
  CHECK(has_problem(p, "/training/fp8/recipe", "blockwise FP8 needs compute capability 9.0+"));
}

}  // namespace parasim::strat
