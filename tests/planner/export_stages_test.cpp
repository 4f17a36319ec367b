// Uneven pipeline stages, zero-bubble schedules and the framework in the exports: Megatron-LM's
// first/last stage flags, torchtitan's first/last stage weights (checked against a re-run of
// its split), refusals naming the JSON path.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "export_test_support.hpp"

using namespace parasim::test;
using parasim::exporter::Target;

namespace {

Outcome export_text(const std::string& parallel, Target target, bool approximate = false,
                    const std::string& training_extra = "") {
  const std::string text = fmt::format(
      R"({{"model": "llama2-7b", "cluster": "dgx-h100",
          "training": {{"global_batch": 16, "micro_batch": 1, "grad_precision": "fp32",
                        "attention": "flash"{}}},
          "parallel": {}}})",
      training_extra, parallel);
  const auto in = parasim::exporter::parse_export_input(text, "stages.json");
  return run_export(in, TargetCase{target, "", "t"}, approximate);
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("megatron: first and last stage layers become --decoder-first/last-pipeline-num-layers") {
  // llama2-7b has 32 layers: 6 + 10 + 10 + 6.
  const Outcome o = export_text(
      R"({"dp": 1, "tp": 2, "pp": 4, "stage_layers": [6, 10, 10, 6]})", Target::kMegatron);
  REQUIRE(o.result);
  CHECK(has_line(o.result->text, "--decoder-first-pipeline-num-layers 6"));
  CHECK(has_line(o.result->text, "--decoder-last-pipeline-num-layers 6"));
  // Only the last differs: one flag.
  const Outcome last = export_text(
      R"({"dp": 1, "tp": 2, "pp": 4, "last_stage_layers": 5})", Target::kMegatron);
  REQUIRE(last.result);
  CHECK(last.result->text.find("--decoder-first-pipeline-num-layers") == std::string::npos);
  CHECK(has_line(last.result->text, "--decoder-last-pipeline-num-layers 5"));
}

TEST_CASE("megatron and deepspeed refuse a split they cannot express, naming the path") {
  const Outcome m = export_text(R"({"dp": 1, "tp": 2, "pp": 4, "stage_layers": [6, 9, 11, 6]})",
                                Target::kMegatron);
  CHECK_FALSE(m.result);
  CHECK(m.refusal.find("/parallel/stage_layers") != std::string::npos);
  const Outcome d = export_text(R"({"dp": 1, "tp": 2, "pp": 4, "stage_layers": [6, 10, 10, 6]})",
                                Target::kDeepSpeed);
  CHECK_FALSE(d.result);
  CHECK(d.refusal.find("/parallel/stage_layers") != std::string::npos);
}

TEST_CASE("torchtitan: the stage weights reproduce the scenario's split") {
  // 32 layers, 4 stages, 7/9/9/7. The smallest weights first: 2 and 1 give effective 35 = 4 x 8
  // + 3, shares 9, 9, 9, 8, less 2 on the first and 1 on the last (2 and 2 would too: 36 = 4 x 9).
  const Outcome o = export_text(R"({"dp": 1, "tp": 2, "pp": 4, "stage_layers": [7, 9, 9, 7]})",
                                Target::kTorchtitan);
  REQUIRE(o.result);
  CHECK(has_line(o.result->text, "--parallelism.pipeline_parallel_first_stage_less_layers 2"));
  CHECK(has_line(o.result->text, "--parallelism.pipeline_parallel_last_stage_less_layers 1"));
  CHECK(has_line(o.result->text, "--parallelism.pipeline_parallel_layers_per_stage 9"));
  // A heavier first stage is no weight torchtitan has (its weights only take layers away).
  const Outcome r = export_text(R"({"dp": 1, "tp": 2, "pp": 4, "stage_layers": [11, 7, 7, 7]})",
                                Target::kTorchtitan);
  CHECK_FALSE(r.result);
  CHECK(r.refusal.find("/parallel/stage_layers") != std::string::npos);
}

// A virtual stage without layers (Megatron's no-op layer, parallel.stage_layers 0 with chunks):
// Megatron-LM and DeepSpeed cannot split so; torchtitan's split gives it, one layer per virtual
// stage less one on the first and on the last (its first virtual stage then holds only the
// embedding, its last only the output layer).
TEST_CASE("a virtual stage without layers: torchtitan's split gives it, the others refuse it") {
  std::string counts = "0";
  for (int v = 1; v < 33; ++v) counts += ", 1";  // pp 2 x chunks 17: 0, 1 x 32, 0 = 32 layers
  counts += ", 0";
  const std::string padded = R"({"dp": 4, "tp": 1, "pp": 2, "schedule": "interleaved-1f1b", )"
                             R"("chunks": 17, "stage_layers": [)" + counts + "]}";
  for (Target t : {Target::kMegatron, Target::kDeepSpeed}) {
    const Outcome o = export_text(padded, t);
    CHECK_FALSE(o.result);
    CHECK(o.refusal.find("/parallel/stage_layers") != std::string::npos);
  }
  const Outcome tt = export_text(padded, Target::kTorchtitan);
  REQUIRE(tt.result);
  CHECK(has_line(tt.result->text, "--parallelism.pipeline_parallel_layers_per_stage 1"));
  CHECK(has_line(tt.result->text, "--parallelism.pipeline_parallel_first_stage_less_layers 1"));
  CHECK(has_line(tt.result->text, "--parallelism.pipeline_parallel_last_stage_less_layers 1"));
}

TEST_CASE("zb-1p and post-validation are refused everywhere, naming the Zero Bubble fork") {
  for (Target t : {Target::kMegatron, Target::kDeepSpeed, Target::kTorchtitan}) {
    const Outcome o =
        export_text(R"({"dp": 1, "tp": 2, "pp": 4, "schedule": "zb-1p"})", t);
    CHECK_FALSE(o.result);
    CHECK(o.refusal.find("/parallel/schedule") != std::string::npos);
    CHECK(o.refusal.find("/parallel/optimizer_post_validation") != std::string::npos);
    CHECK(o.refusal.find("zero-bubble-pipeline-parallelism") != std::string::npos);
  }
}

TEST_CASE("a scenario simulated for another framework says so in the notes") {
  const Outcome o = export_text(R"({"dp": 8})", Target::kMegatron, true,
                                R"(, "framework": "megatron-deepspeed")");
  REQUIRE(o.result);
  bool said = false;
  for (const auto& n : o.result->notes) {
    said = said || n.find("simulated for the framework megatron-deepspeed") != std::string::npos;
  }
  CHECK(said);
}
