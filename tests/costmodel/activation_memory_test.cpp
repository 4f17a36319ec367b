#include "costmodel/activation_memory.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace parasim::cost;

namespace {

bool rel_eq(double got, double want, double tol = 1e-12) {
  return std::abs(got - want) <= tol * std::abs(want);
}

// GPT-3 175B as in Korthikanti et al. 2022, Table 3: s 2048, h 12288, a 96, t 8, b 1.
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

double sum_if(const ActivationShape& x, bool (*keep)(const ActivationTerm&)) {
  double total = 0;
  for (const auto& term : activation_terms_per_layer(x)) {
    if (keep(term)) total += term.bytes;
  }
  return total;
}

}  // namespace

TEST_CASE("GPT-3 175B per-layer activations equal Korthikanti et al. 2022 section 4") {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(1, false), Recompute::kNone).value,
               sbh * (34 + 5 * a * s / h)));
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(8, false), Recompute::kNone).value,
               sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(8, true), Recompute::kNone).value,
               sbh / t * (34 + 5 * a * s / h)));
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(8, false), Recompute::kSelective).value,
               sbh * (10 + 24 / t)));
  CHECK(
      rel_eq(activation_bytes_per_layer(gpt3(8, true), Recompute::kSelective).value, 34 * sbh / t));
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(1, false), Recompute::kFull).value, 2 * sbh));
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(8, false), Recompute::kFull).value, 2 * sbh));
  // Our documented choice: with SP the checkpointed layer input is sequence-sharded.
  CHECK(rel_eq(activation_bytes_per_layer(gpt3(8, true), Recompute::kFull).value, 2 * sbh / t));
}

TEST_CASE("the itemised terms reproduce the paper's block totals") {
  const ActivationShape x = gpt3(1, false);
  const double s = x.seq_len, b = x.micro_batch, h = x.hidden, a = x.heads;
  const double sbh = s * b * h, as2b = a * s * s * b;
  CHECK(rel_eq(sum_if(x, [](const ActivationTerm& t) { return t.attention_core; }), 5 * as2b));
  // Unsharded under plain TP: QKV input 2, attention dropout mask 1, fc1 input 2, MLP dropout
  // mask 1, two norm inputs 4 = 10sbh.
  CHECK(rel_eq(sum_if(x, [](const ActivationTerm& t) { return !t.sharded_by_tp; }), 10 * sbh));
  CHECK(rel_eq(
      sum_if(x, [](const ActivationTerm& t) { return t.sharded_by_tp && !t.attention_core; }),
      24 * sbh));
  const auto terms = activation_terms_per_layer(x);
  CHECK(terms.size() == 15);
  CHECK(std::string(terms.front().name) == "ln1 input");
}

TEST_CASE("tensor parallelism of 1 and sequence parallelism of 1 change nothing") {
  const ActivationShape plain = gpt3(1, false);
  const ActivationShape sp1 = gpt3(1, true);
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    CHECK(activation_bytes_per_layer(plain, r) == activation_bytes_per_layer(sp1, r));
  }
}

TEST_CASE("generalisations: GQA, SwiGLU, no dropout (Llama-style layer)") {
  // Llama-2-70B-like: h 8192, a 64, kv 8, f 28672, s 4096, b 1, t 8, SwiGLU, no dropout.
  const double s = 4096, b = 1, h = 8192, a = 64, kv = 8, f = 28672, t = 8;
  const double sbh = s * b * h, sbf = s * b * f, as2b = a * s * s * b;
  ActivationShape x{.seq_len = s,
                    .micro_batch = b,
                    .hidden = h,
                    .heads = a,
                    .kv_heads = kv,
                    .ffn_hidden = f,
                    .swiglu = true,
                    .dropout = false,
                    .tp = 1,
                    .sequence_parallel = false};
  // ln1 2 + qkv input 2 + q 2 + k,v 2*2*kv/a + out-proj 2 + ln2 2 + fc input 2 (sbh);
  // gate, up, down input 6sbf; softmax output 2as^2b only.
  const double replicated = 8 * sbh;
  const double sharded = (2 + 4 * kv / a + 2) * sbh + 6 * sbf;
  CHECK(rel_eq(activation_bytes_per_layer(x, Recompute::kNone).value,
               replicated + sharded + 2 * as2b));
  CHECK(rel_eq(activation_bytes_per_layer(x, Recompute::kSelective).value, replicated + sharded));
  x.tp = 8;
  CHECK(rel_eq(activation_bytes_per_layer(x, Recompute::kNone).value,
               replicated + (sharded + 2 * as2b) / t));
  x.sequence_parallel = true;
  CHECK(rel_eq(activation_bytes_per_layer(x, Recompute::kSelective).value,
               (replicated + sharded) / t));
  for (const auto& term : activation_terms_per_layer(x)) {
    CHECK(std::string(term.name).find("dropout") == std::string::npos);
  }
}

TEST_CASE("gelu with f != 4h scales the MLP terms by f") {
  ActivationShape x = gpt3(1, false);
  const double sbh = x.seq_len * x.micro_batch * x.hidden;
  const Bytes base = activation_bytes_per_layer(x, Recompute::kSelective);
  x.ffn_hidden = 2 * x.hidden;  // halves gelu input and fc2 input: 16sbh -> 8sbh
  CHECK(rel_eq(base.value - activation_bytes_per_layer(x, Recompute::kSelective).value, 8 * sbh));
}

TEST_CASE("invalid shapes are rejected") {
  ActivationShape x = gpt3(1, false);
  x.tp = 0;
  CHECK_THROWS_AS(activation_bytes_per_layer(x, Recompute::kNone), std::invalid_argument);
  x = gpt3(1, false);
  x.kv_heads = 0;
  CHECK_THROWS_AS(activation_terms_per_layer(x), std::invalid_argument);
  CHECK(std::string(recompute_name(Recompute::kSelective)) == "selective");
}
