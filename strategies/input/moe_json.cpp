#include "strategies/input/moe_json.hpp"

#include <fmt/format.h>

#include "costmodel/json_fields.hpp"

namespace parasim::strat {
namespace {

template <typename T, typename U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

}  // namespace

void read_moe(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d, int layers,
              MoeSpec& moe) {
  cost::JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const bool from_preset = moe.enabled();
  assign(moe.experts, r.integer("experts", !from_preset, 1, 1 << 16));
  assign(moe.top_k, r.integer("top_k", !from_preset, 1, 1 << 10));
  assign(moe.expert_ffn_hidden, r.integer("expert_ffn_hidden", !from_preset, 1, 1 << 22));
  assign(moe.shared_experts, r.integer("shared_experts", false, 0, 1 << 10));
  if (moe.shared_experts > 0 && moe.shared_ffn_hidden == 0) {
    moe.shared_ffn_hidden = moe.expert_ffn_hidden;
  }
  assign(moe.shared_ffn_hidden, r.integer("shared_ffn_hidden", false, 1, 1 << 22));
  assign(moe.first_dense_layers, r.integer("first_dense_layers", false, 0, 1 << 16));
  assign(moe.layer_freq, r.integer("layer_freq", false, 1, 1 << 16));
  if (auto s = r.choice("router", false, {"softmax", "sigmoid"})) {
    moe.score = *s == "sigmoid" ? RouterScore::kSigmoid : RouterScore::kSoftmax;
  }
  if (auto b =
          r.choice("load_balancing", false, {"aux_loss", "seq_aux_loss", "expert_bias", "none"})) {
    moe.balancing = *b == "aux_loss"       ? LoadBalancing::kAuxLoss
                    : *b == "seq_aux_loss" ? LoadBalancing::kSeqAuxLoss
                    : *b == "expert_bias"  ? LoadBalancing::kExpertBias
                                           : LoadBalancing::kNone;
  }
  if (auto c = r.number("capacity_factor", false, 0, 1e3)) {
    if (*c > 0 && *c < 1) {
      d.add(r.child_path("capacity_factor"),
            fmt::format("expected 0 (dropless) or a factor of at least 1 over an expert's fair "
                        "share, got {}",
                        *c));
    } else {
      moe.capacity_factor = *c;
    }
  }
  assign(moe.max_violation, r.number("max_violation", false, 0, 1e3));
  r.finish();
  if (moe.top_k > moe.experts && moe.experts > 0) {
    d.add(r.child_path("top_k"),
          fmt::format("top_k ({}) must not exceed the experts ({})", moe.top_k, moe.experts));
  }
  if (moe.first_dense_layers >= layers && layers > 0) {
    d.add(r.child_path("first_dense_layers"),
          fmt::format("first_dense_layers ({}) leaves none of the {} layers an MoE layer",
                      moe.first_dense_layers, layers));
  }
  if (moe.balancing == LoadBalancing::kExpertBias && moe.score != RouterScore::kSigmoid) {
    d.add(r.child_path("load_balancing"),
          "expert_bias balances a sigmoid router (its top-k is taken with the bias, "
          "arXiv 2408.15664): set \"router\": \"sigmoid\"");
  }
}

void read_mla(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d,
              MlaSpec& mla) {
  cost::JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const bool from_preset = mla.enabled();
  assign(mla.q_lora_rank, r.integer("q_lora_rank", false, 0, 1 << 20));
  assign(mla.kv_lora_rank, r.integer("kv_lora_rank", !from_preset, 1, 1 << 20));
  assign(mla.qk_nope_head_dim, r.integer("qk_nope_head_dim", !from_preset, 1, 1 << 14));
  assign(mla.qk_rope_head_dim, r.integer("qk_rope_head_dim", !from_preset, 1, 1 << 14));
  assign(mla.v_head_dim, r.integer("v_head_dim", !from_preset, 1, 1 << 14));
  r.finish();
}

}  // namespace parasim::strat
