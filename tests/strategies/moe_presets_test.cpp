// The mixture-of-experts presets' parameter counts, total and active, against the counts each
// model's publisher states, and exactly against the config.json shapes counted by hand here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "strategies/input/model_presets.hpp"

namespace parasim::strat {
namespace {

const ModelSpec& spec(const char* name) {
  const ModelPreset* p = find_model_preset(name);
  REQUIRE(p != nullptr);
  return p->spec;
}

// Within `tolerance` (relative) of a published figure given to 2-3 significant digits.
bool near(std::int64_t count, double published, double tolerance) {
  return std::fabs(static_cast<double>(count) - published) <= tolerance * published;
}

}  // namespace

TEST_CASE("MoE presets: totals and active counts exactly as their config.json shapes give") {
  // Each count by hand: attention (GQA: h a d + 2 h kv d + a d h, plus q/k norms) + 2 h norms
  // + router h E + E experts of 3 h F, per layer; + 2 V h (untied) + h final norm.
  CHECK(spec("mixtral-8x7b").total_params() == std::int64_t{46'702'792'704});
  CHECK(spec("mixtral-8x7b").active_params() == std::int64_t{12'879'925'248});
  CHECK(spec("mixtral-8x22b").total_params() == std::int64_t{140'620'634'112});
  CHECK(spec("mixtral-8x22b").active_params() == std::int64_t{39'152'031'744});
  CHECK(spec("qwen3-30b-a3b").total_params() == std::int64_t{30'532'122'624});
  CHECK(spec("qwen3-30b-a3b").active_params() == std::int64_t{3'353'032'704});
  CHECK(spec("qwen3-235b-a22b").total_params() == std::int64_t{235'093'634'560});
  CHECK(spec("qwen3-235b-a22b").active_params() == std::int64_t{22'190'763'520});
  CHECK(spec("olmoe-1b-7b").total_params() == std::int64_t{6'919'161'856});
  CHECK(spec("olmoe-1b-7b").active_params() == std::int64_t{1'282'017'280});
  const ModelSpec& v3 = spec("deepseek-v3");
  // MLA: h q_r + q_r + q_r a (128 + 64) + h (512 + 64) + 512 + 512 a (128 + 128) + a 128 h.
  CHECK(v3.attention_params() == std::int64_t{187'107'328});
  // The MTP module: two input norms, the 2h x h projection, one MoE layer, its output norm.
  CHECK(v3.mtp_params() == std::int64_t{11'610'068'224});
  CHECK(v3.total_params() - v3.mtp_params() == std::int64_t{671'026'419'200});
  CHECK(v3.active_params() == std::int64_t{37'552'297'472});
}

TEST_CASE("MoE presets agree with their publishers' rounded totals") {
  CHECK(near(spec("mixtral-8x7b").total_params(), 46.7e9, 0.002));
  CHECK(near(spec("mixtral-8x7b").active_params(), 12.9e9, 0.004));
  CHECK(near(spec("mixtral-8x22b").total_params(), 141e9, 0.004));
  CHECK(near(spec("mixtral-8x22b").active_params(), 39e9, 0.005));
  const ModelSpec& v3 = spec("deepseek-v3");
  CHECK(near(v3.total_params() - v3.mtp_params(), 671e9, 0.001));
  // "37B activated" (arXiv 2412.19437 sec. 4.2); README_WEIGHTS.md's 36.7B is 0.85B lower,
  // which the published breakdown does not explain.
  CHECK(near(v3.active_params(), 37e9, 0.02));
  CHECK(near(v3.mtp_params(), 11.5e9, 0.01));
  CHECK(near(spec("qwen3-30b-a3b").total_params(), 30.5e9, 0.002));
  CHECK(near(spec("qwen3-30b-a3b").active_params(), 3.3e9, 0.02));
  CHECK(near(spec("qwen3-235b-a22b").total_params(), 235e9, 0.001));
  CHECK(near(spec("qwen3-235b-a22b").active_params(), 22e9, 0.01));
  CHECK(near(spec("olmoe-1b-7b").total_params(), 6.9e9, 0.003));
  CHECK(near(spec("olmoe-1b-7b").active_params(), 1.3e9, 0.015));
}

TEST_CASE("MoE layer placement: first dense layers and the layer frequency") {
  const ModelSpec& v3 = spec("deepseek-v3");
  CHECK_FALSE(v3.moe.is_moe_layer(0));
  CHECK_FALSE(v3.moe.is_moe_layer(2));
  CHECK(v3.moe.is_moe_layer(3));
  CHECK(v3.moe.is_moe_layer(60));
  CHECK(v3.moe.moe_layers_in(0, 61) == 58);
  MoeSpec every_other = v3.moe;
  every_other.first_dense_layers = 0;
  every_other.layer_freq = 2;
  CHECK(every_other.moe_layers_in(0, 8) == 4);
  CHECK(every_other.is_moe_layer(4));
  CHECK_FALSE(every_other.is_moe_layer(5));
  // A dense model has no MoE layer, and its counts are the dense formula's.
  const ModelSpec& llama = spec("llama2-7b");
  CHECK(llama.moe.moe_layers_in(0, llama.layers) == 0);
  CHECK(llama.active_params() == llama.total_params());
}

TEST_CASE("one expert of the dense width, top-1, is the dense model plus its router") {
  ModelSpec dense = spec("llama2-7b");
  ModelSpec one = dense;
  one.moe.experts = 1;
  one.moe.top_k = 1;
  one.moe.expert_ffn_hidden = dense.ffn_hidden;
  CHECK(one.total_params() - dense.total_params() ==
        static_cast<std::int64_t>(dense.layers) * dense.hidden);
}


TEST_CASE("a head width other than hidden / heads sizes the projections; q/k norms add kernels") {
  // Qwen3-30B-A3B: 32 heads of 128 on hidden 2048: Q and the output projection are 2048 x 4096.
  const ModelSpec& q = spec("qwen3-30b-a3b");
  CHECK(q.query_width() == 4096);
  const std::int64_t h = 2048, qw = 4096, kv = 4 * 128;
  CHECK(q.attention_params() == h * qw + 2 * h * kv + qw * h + 2 * 128);
}

}  // namespace parasim::strat
