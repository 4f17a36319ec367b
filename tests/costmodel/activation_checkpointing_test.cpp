// Activation checkpointing as the trainers offer it: per-layer bytes against hand counts
// (costmodel/activation_checkpointing.hpp, docs/activation-checkpointing.md).
#include "costmodel/activation_checkpointing.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace parasim::cost;

namespace {

bool rel_eq(double got, double want) {
  return std::abs(got - want) <= 1e-12 * std::abs(want);
}

// Llama 3 8B's block: s 8192, h 4096, 32 heads, 8 KV heads, f 14336, SwiGLU, no dropout.
ActivationShape llama3_8b(int tp, bool sp) {
  return ActivationShape{.seq_len = 8192,
                         .micro_batch = 1,
                         .hidden = 4096,
                         .heads = 32,
                         .kv_heads = 8,
                         .ffn_hidden = 14336,
                         .swiglu = true,
                         .dropout = false,
                         .tp = tp,
                         .sequence_parallel = sp};
}

// GPT-3 175B as in Korthikanti et al. 2022 (gelu, f = 4h, dropout).
ActivationShape gpt3(int tp, bool sp) {
  return ActivationShape{.seq_len = 2048,
                         .micro_batch = 1,
                         .hidden = 12288,
                         .heads = 96,
                         .kv_heads = 96,
                         .ffn_hidden = 4 * 12288,
                         .swiglu = false,
                         .dropout = true,
                         .tp = tp,
                         .sequence_parallel = sp};
}

}  // namespace

TEST_CASE("per-op AC keeps the block input, wq, wv, SDPA, w1 and w2 outputs (hand count)") {
  const double s = 8192, h = 4096, a = 32, f = 14336;
  const double sbh = s * h, kv = sbh / 4;  // 8 of 32 heads
  // tp 1: input 2sbh, wq 2sbh, wv 2sbh/4, SDPA output 2sbh and logsumexp 4as, w1 2sbf, w2 2sbh.
  const double saved1 = 2 * sbh + 2 * sbh + 2 * kv + 2 * sbh + 4 * a * s + 2 * s * f + 2 * sbh;
  CHECK(rel_eq(per_op_sac_saved_bytes(llama3_8b(1, false)).value, saved1));
  CHECK(rel_eq(activation_bytes_per_layer(llama3_8b(1, false), Recompute::kPerOp).value, saved1));
  // Rerun inside the backward and read by it: norm 1 output, Q and K after RoPE, wo's input,
  // norm 2 input and output, SiLU output, w3 output, the product.
  const double rerun1 = 2 * sbh + 2 * sbh + 2 * kv + 2 * sbh + 2 * sbh + 2 * sbh + 3 * 2 * s * f;
  CHECK(rel_eq(per_op_sac_backward_bytes(llama3_8b(1, false)).value, saved1 + rerun1));
  // tp 4 with SP: sharded terms / 4, the two reduce-scatter outputs saved (2sbh / 4 each), w2's
  // TP-partial output whole on every rank; the gathered norm outputs whole.
  const double t = 4;
  const double saved4 =
      (2 * sbh + 2 * sbh + 2 * kv + 2 * sbh + 4 * a * s + 2 * sbh + 2 * s * f + 2 * sbh) / t +
      2 * sbh;
  CHECK(rel_eq(per_op_sac_saved_bytes(llama3_8b(4, true)).value, saved4));
  const double rerun4 =
      2 * sbh + (2 * sbh + 2 * kv + 2 * sbh + 2 * sbh) / t + 2 * sbh + 3 * 2 * s * f / t;
  CHECK(rel_eq(per_op_sac_backward_bytes(llama3_8b(4, true)).value, saved4 + rerun4));
  // tp 4 without SP: no reduce-scatter outputs (the all-reduces rerun), the input whole.
  const double saved4_nosp =
      2 * sbh + (2 * sbh + 2 * kv + 2 * sbh + 4 * a * s + 2 * s * f) / t + 2 * sbh;
  CHECK(rel_eq(per_op_sac_saved_bytes(llama3_8b(4, false)).value, saved4_nosp));
}

TEST_CASE("per-op AC with torchao's float8: every linear's _scaled_mm output saved (hand count)") {
  ActivationShape x = llama3_8b(1, false);
  x.scaled_mm_linears = true;  // linear_input_bytes stays 2: torchao keeps the bf16 input
  const double s = 8192, h = 4096, a = 32, f = 14336;
  const double sbh = s * h, kv = sbh / 4;
  // bf16's saved set plus wk's output, wo's output and w3's output (mms 2, 4, 6, no longer
  // counted by the policy): input, wq, wk, wv, SDPA and lse, wo, w1, w3, w2.
  const double saved = 2 * sbh + 2 * sbh + 2 * kv + 2 * kv + 2 * sbh + 4 * a * s + 2 * sbh +
                       2 * s * f + 2 * s * f + 2 * sbh;
  CHECK(rel_eq(per_op_sac_saved_bytes(x).value, saved));
  // Rerun and read by the backward: norm 1 output, Q and K after RoPE, wo's input, norm 2 input
  // and output, SiLU output, the product (w3's output is saved now).
  const double rerun = 2 * sbh + 2 * sbh + 2 * kv + 2 * sbh + 2 * sbh + 2 * sbh + 2 * 2 * s * f;
  CHECK(rel_eq(per_op_sac_backward_bytes(x).value, saved + rerun));
  // tp 4 with SP: wo's and w2's TP-partial outputs whole on every rank.
  x = llama3_8b(4, true);
  x.scaled_mm_linears = true;
  const double t = 4;
  const double saved4 = (2 * sbh + 2 * sbh + 2 * kv + 2 * kv + 2 * sbh + 4 * a * s + 2 * sbh +
                         2 * s * f + 2 * s * f + 2 * sbh) / t +
                        2 * sbh + 2 * sbh;
  CHECK(rel_eq(per_op_sac_saved_bytes(x).value, saved4));
}

TEST_CASE("per-op AC on a GeLU MLP saves fc1 and reruns fc2; shapes it does not model throw") {
  ActivationShape x = gpt3(1, false);
  x.dropout = false;
  const double s = 2048, h = 12288, a = 96, f = 4 * h, sbh = s * h;
  const double saved = 2 * sbh + 2 * sbh + 2 * sbh + 2 * sbh + 4 * a * s + 2 * s * f;
  CHECK(rel_eq(per_op_sac_saved_bytes(x).value, saved));
  CHECK_THROWS_AS(per_op_sac_saved_bytes(gpt3(1, false)), std::invalid_argument);  // dropout
  x.linear_input_bytes = 1.03125;
  CHECK_THROWS_AS(per_op_sac_terms(x), std::invalid_argument);  // FP8 linears
}

TEST_CASE("Megatron's recompute modules drop their tensors (hand count, GPT-3 layer)") {
  const double s = 2048, h = 12288, sbh = s * h, sbf = 4 * sbh, t = 8;
  // core_attn alone is Korthikanti's selective: sbh (10 + 24 / t) without SP, 34 sbh / t with SP.
  CHECK(selective_bytes_per_layer(gpt3(8, false), {}).value ==
        activation_bytes_per_layer(gpt3(8, false), Recompute::kSelective).value);
  CHECK(rel_eq(selective_bytes_per_layer(gpt3(8, true), {}).value, 34 * sbh / t));
  // + mlp: the GeLU input and fc2 input (2sbf each, sharded) rerun from fc1's input.
  CHECK(rel_eq(selective_bytes_per_layer(gpt3(8, true), {.core_attn = true, .mlp = true}).value,
               34 * sbh / t - 4 * sbf / t));
  // + layernorm: the QKV and fc1 inputs (norm outputs, 2sbh each; replicated without SP).
  CHECK(rel_eq(
      selective_bytes_per_layer(gpt3(8, false), {.core_attn = true, .layernorm = true}).value,
      sbh * (10 + 24 / t) - 4 * sbh));
  // All three with SP, and none (an empty list keeps everything).
  CHECK(rel_eq(selective_bytes_per_layer(gpt3(8, true), {true, true, true}).value,
               (34 * sbh - 4 * sbf - 4 * sbh) / t));
  CHECK(selective_bytes_per_layer(gpt3(8, true), {false, false, false}).value ==
        activation_bytes_per_layer(gpt3(8, true), Recompute::kNone).value);
  CHECK(std::string(recompute_name(Recompute::kPerOp)) == "per-op");
}
