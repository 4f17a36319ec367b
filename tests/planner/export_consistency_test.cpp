// Each export is internally consistent with the trainer's own batch rules: Megatron-LM's
// dp = world / (tp x pp x cp) and global % (micro x dp) == 0 (arguments.py, and
// core/num_microbatches_calculator.py); DeepSpeed's train_batch_size = micro x accumulation x dp
// (runtime/config.py _batch_assertion); torchtitan's global % (local x dp_replicate x dp_shard)
// == 0 (trainer.py). And each reproduces the scenario's degrees and micro-batches per step.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "export_test_support.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::Target;

namespace {

long long as_int(const std::string& s) {
  return std::stoll(s);
}

void check_megatron(const parasim::strat::Scenario& s, const std::string& text) {
  const auto a = arg_lines(text);
  const long long tp = as_int(arg_value(a, "--tensor-model-parallel-size"));
  const long long pp = as_int(arg_value(a, "--pipeline-model-parallel-size"));
  const long long cp = as_int(arg_value(a, "--context-parallel-size"));
  const long long micro = as_int(arg_value(a, "--micro-batch-size"));
  const long long global = as_int(arg_value(a, "--global-batch-size"));
  const long long world = s.cluster.total_gpus();
  REQUIRE(world % (tp * pp * cp) == 0);
  const long long dp = world / (tp * pp * cp);
  CHECK(dp == s.parallel.dp);
  REQUIRE(global % (micro * dp) == 0);
  CHECK(global / (micro * dp) == s.micro_batches());
}

// DeepSpeedConfig's _batch_assertion: train_batch == micro x gas x world_size, world_size the
// data-parallel ranks with an mpu and every rank without one (runtime/config.py). With AutoTP
// (tp > 1) the export leaves train_batch_size for DeepSpeed to derive, which holds for both; the
// data-parallel count gives the scenario's global batch.
void check_deepspeed(const parasim::strat::Scenario& s, const std::string& text) {
  const json j = json::parse(without_comments(text));
  const long long micro = j["train_micro_batch_size_per_gpu"];
  const long long gas = j["gradient_accumulation_steps"];
  CHECK(micro * gas * s.parallel.dp == s.training.global_batch);
  if (s.parallel.tp > 1) {
    CHECK_FALSE(j.contains("train_batch_size"));
  } else {
    CHECK(j["train_batch_size"].get<long long>() == s.training.global_batch);
  }
}

void check_torchtitan(const parasim::strat::Scenario& s, long long local, long long global,
                      long long replicate, long long shard, long long pp, long long microbatch) {
  CHECK(replicate * shard == s.parallel.dp);
  REQUIRE(global % (local * replicate * shard) == 0);
  const long long accumulation = global / (local * replicate * shard);
  REQUIRE(local % microbatch == 0);
  const long long per_pipeline = pp > 1 ? local / microbatch : 1;
  CHECK(accumulation * per_pipeline == s.micro_batches());
  CHECK((pp > 1 ? microbatch : local) == s.training.micro_batch);
}

void check_all(const parasim::exporter::ExportInput& in) {
  const auto& s = in.scenario;
  for (const TargetCase& t : target_cases()) {
    if (t.target == Target::kShampoo) continue;
    CAPTURE(t.tag);
    const bool as_json = t.version == "0.2";
    const Outcome o = run_export(in, t, true, as_json);
    REQUIRE(o.result);
    const std::string& text = o.result->text;
    if (t.target == Target::kMegatron) check_megatron(s, text);
    if (t.target == Target::kDeepSpeed) check_deepspeed(s, text);
    if (t.target != Target::kTorchtitan) continue;
    if (as_json) {
      const json j = json::parse(text);
      const json& p = j["parallelism"];
      check_torchtitan(s, j["training"]["local_batch_size"], j["training"]["global_batch_size"],
                       p["data_parallel_replicate_degree"], p["data_parallel_shard_degree"],
                       p["pipeline_parallel_degree"],
                       p.value("pipeline_parallel_microbatch_size", 1));
    } else {
      const auto a = arg_lines(text);
      const std::string mbs = arg_value(a, "--parallelism.pipeline_parallel_microbatch_size");
      check_torchtitan(s, as_int(arg_value(a, "--training.local_batch_size")),
                       as_int(arg_value(a, "--training.global_batch_size")),
                       as_int(arg_value(a, "--parallelism.data_parallel_replicate_degree")),
                       as_int(arg_value(a, "--parallelism.data_parallel_shard_degree")),
                       as_int(arg_value(a, "--parallelism.pipeline_parallel_degree")),
                       mbs.empty() ? 1 : as_int(mbs));
    }
  }
}

}  // namespace

TEST_CASE("the exports of the shipped scenarios keep the trainers' batch rules") {
  for (const ExportCase& c : export_cases()) {
    CAPTURE(c.display);
    check_all(input_of(c));
  }
}

TEST_CASE("the batch rules hold over a grid of degrees, batches and ZeRO stages") {
  int cases = 0;
  for (int dp : {1, 2, 4, 8}) {
    for (int tp : {1, 2, 8}) {
      for (int pp : {1, 2, 4}) {
        const int gpus = dp * tp * pp;
        if (gpus % 8 != 0) continue;
        for (int micro : {1, 3}) {
          for (int per_pipeline : {4, 8}) {
            for (int zero : {0, 1, 3}) {
              const std::string text = fmt::format(
                  R"({{"name": "grid", "model": "llama2-7b",
                      "cluster": {{"preset": "dgx-h100", "nodes": {}}},
                      "training": {{"global_batch": {}, "micro_batch": {}}},
                      "parallel": {{"dp": {}, "tp": {}, "pp": {}, "zero_stage": {}}}}})",
                  gpus / 8, micro * dp * per_pipeline, micro, dp, tp, pp, zero);
              CAPTURE(text);
              check_all(parasim::exporter::parse_export_input(text, "grid.json"));
              ++cases;
            }
          }
        }
      }
    }
  }
  CHECK(cases > 50);
}

namespace {

// The zero_optimization section of the DeepSpeed export of llama2-7b on 8 H100s, dp 8, ZeRO-3,
// with `framework` as the scenario's training.framework (empty: the default).
json deepspeed_zero3_section(const std::string& framework) {
  const std::string text = fmt::format(R"({{"name": "z3", "model": "llama2-7b",
      "cluster": {{"preset": "dgx-h100", "nodes": 1}},
      "training": {{"global_batch": 16, "micro_batch": 1{}}},
      "parallel": {{"dp": 8, "zero_stage": 3}}}})",
                                       framework.empty() ? "" : ", \"framework\": " + framework);
  const auto in = parasim::exporter::parse_export_input(text, "z3.json");
  const Outcome o = run_export(in, {parasim::exporter::Target::kDeepSpeed, "", "deepspeed"}, false,
                               false);
  REQUIRE(o.result);
  return json::parse(without_comments(o.result->text))["zero_optimization"];
}

}  // namespace

TEST_CASE("a DeepSpeed ZeRO-3 step exports the coordinator settings it was simulated with") {
  const json zero = deepspeed_zero3_section(R"({"preset": "deepspeed",
      "zero3": {"prefetch_bucket_size": 2e7, "max_reuse_distance": 0}})");
  CHECK(zero["stage"] == 3);
  CHECK(zero["stage3_prefetch_bucket_size"] == 20000000);
  CHECK(zero["stage3_max_reuse_distance"] == 0);
  CHECK(zero["stage3_max_live_parameters"] == 1000000000);
  CHECK(zero["stage3_param_persistence_threshold"] == 100000);
  CHECK(zero["contiguous_gradients"] == true);
  // Every key is one the DeepSpeed version targeted knows.
  const auto keys = key_list("deepspeed-0.19.8.txt");
  for (const auto& item : zero.items()) {
    const std::string key = item.key();  // not a structured binding: clang 14's doctest macros
    CAPTURE(key);
    CHECK(keys.count("zero_optimization." + key) == 1);
  }
}

TEST_CASE("a ZeRO-3 step simulated without DeepSpeed's bucket buffer exports contiguous_gradients off") {
  // The default framework gathers per layer and keeps no bucket buffer; DeepSpeed would allocate
  // reduce_bucket_size elements (here every gradient of the stage) unless told not to.
  const json zero = deepspeed_zero3_section("");
  CHECK(zero["contiguous_gradients"] == false);
  CHECK(zero["overlap_comm"] == true);  // ZeRO-3 reduce-scatters layer by layer
  CHECK_FALSE(zero.contains("stage3_prefetch_bucket_size"));
}
