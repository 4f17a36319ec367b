#include "strategies/input/scenario_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/device_clock.hpp"
#include "costmodel/json_fields.hpp"
#include "costmodel/kernel_efficiency_json.hpp"
#include "strategies/framework/framework_json.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/input/moe_json.hpp"
#include "strategies/input/recompute_json.hpp"
#include "strategies/input/registered_fields.hpp"
#include "strategies/input/sharding_json.hpp"
#include "strategies/input/stage_layers_json.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/registry/scenario_rules.hpp"

namespace parasim::strat {
namespace {

using cost::Diagnostics;
using cost::JsonObjectReader;
using nlohmann::json;

template <typename T, typename U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

std::string preset_names_models() {
  std::string out;
  for (const auto& p : model_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}
std::string preset_names_clusters() {
  std::string out;
  for (const auto& p : cost::cluster_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

void read_model(const json& node, Diagnostics& d, const ScenarioLimits& limits, ModelSpec& m) {
  const std::string path = "/model";
  if (node.is_string()) {
    const auto* preset = find_model_preset(node.get<std::string>());
    if (preset == nullptr) {
      d.add(path, fmt::format("unknown model preset \"{}\" (presets: {})", node.get<std::string>(),
                              preset_names_models()));
      return;
    }
    m = preset->spec;
    return;
  }
  JsonObjectReader r(node, path, d);
  bool from_preset = false;
  if (auto name = r.string("preset", false)) {
    if (const auto* preset = find_model_preset(*name)) {
      m = preset->spec;
      from_preset = true;
    } else {
      d.add(r.child_path("preset"),
            fmt::format("unknown model preset \"{}\" (presets: {})", *name, preset_names_models()));
      from_preset = true;  // keep reading the overrides, nothing more is required
    }
  } else {
    m.name = "custom";
  }
  const bool req = !from_preset;
  assign(m.name, r.string("name", false));
  assign(m.layers, r.integer("layers", req, 1, limits.max_layers));
  assign(m.hidden, r.integer("hidden", req, 1, 1 << 20));
  assign(m.heads, r.integer("heads", req, 1, 1 << 14));
  if (!from_preset) m.kv_heads = m.heads;
  assign(m.kv_heads, r.integer("kv_heads", false, 1, 1 << 14));
  if (!from_preset && m.hidden > 0) m.ffn_hidden = 4 * m.hidden;
  assign(m.ffn_hidden, r.integer("ffn_hidden", false, 1, 1 << 22));
  assign(m.vocab, r.integer("vocab", req, 1, 1 << 24));
  assign(m.seq_len, r.integer("seq_len", req, 1, 1 << 24));
  if (auto mlp = r.choice("mlp", false, {"gelu", "swiglu"})) {
    m.mlp = *mlp == "swiglu" ? MlpKind::kSwiglu : MlpKind::kGelu;
  }
  if (auto norm = r.choice("norm", false, {"layernorm", "rmsnorm"})) {
    m.norm = *norm == "rmsnorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  }
  assign(m.tied_embeddings, r.boolean("tied_embeddings", false));
  assign(m.dropout, r.boolean("dropout", false));
  assign(m.linear_bias, r.boolean("linear_bias", false));
  assign(m.qkv_bias, r.boolean("qkv_bias", false));
  assign(m.learned_positions, r.boolean("learned_positions", false));
  assign(m.explicit_head_dim, r.integer("head_dim", false, 1, 1 << 14));
  if (auto q = r.choice("qk_norm", false, {"none", "per-head", "full"})) {
    m.qk_norm = *q == "per-head" ? QkNorm::kPerHead : *q == "full" ? QkNorm::kFull : QkNorm::kNone;
  }
  assign(m.mtp_layers, r.integer("mtp_layers", false, 0, 16));
  if (const json* mla = r.child("mla", false)) read_mla(*mla, r.child_path("mla"), d, m.mla);
  if (const json* moe = r.child("moe", false)) {
    read_moe(*moe, r.child_path("moe"), d, m.layers, m.moe);
  }
  if (const json* lr = r.child("low_rank", false)) {
    JsonObjectReader l(*lr, r.child_path("low_rank"), d);
    const auto rank = l.integer("rank", false, 1, 1 << 20);
    auto attn = l.integer("attn_rank", false, 1, 1 << 20);
    auto mlp = l.integer("mlp_rank", false, 1, 1 << 20);
    std::optional<double> ratio;
    if (const json* rr = l.child("rank_ratio", false)) {
      if (rr->is_number() && rr->get<double>() > 0 && rr->get<double>() <= 1) {
        ratio = rr->get<double>();
      } else {
        d.add(l.child_path("rank_ratio"), "expected a number in (0, 1], the rank over hidden");
      }
    }
    if (auto v = l.choice("variant", false, {"svd", "cola", "lax"})) {
      m.low_rank.variant = *v == "svd"   ? LowRankVariant::kSvd
                           : *v == "lax" ? LowRankVariant::kLax
                                         : LowRankVariant::kCola;
    }
    l.finish();
    // One way of saying the rank: two at once would leave one silently unused.
    const int ways = (rank ? 1 : 0) + (ratio ? 1 : 0) + (attn || mlp ? 1 : 0);
    if (ways > 1) {
      d.add(l.path(),
            "the rank is given more than one way: keep one of \"rank\" (both groups), "
            "\"rank_ratio\" (rank over hidden), or \"attn_rank\" with \"mlp_rank\"");
    } else if ((attn.has_value()) != (mlp.has_value())) {
      d.add(l.path(),
            fmt::format("\"{}\" without \"{}\": give both group ranks, or \"rank\" "
                        "for both",
                        attn ? "attn_rank" : "mlp_rank", attn ? "mlp_rank" : "attn_rank"));
    }
    const int by_ratio = ratio ? static_cast<int>(std::lround(*ratio * m.hidden)) : 0;
    const int both = rank ? static_cast<int>(*rank) : by_ratio;
    m.low_rank.attn_rank = attn ? static_cast<int>(*attn) : both;
    m.low_rank.mlp_rank = mlp ? static_cast<int>(*mlp) : both;
    if (ways == 0 && !m.low_rank.enabled() && l.valid()) {
      d.add(l.path(),
            "expected \"rank\", \"rank_ratio\", or both \"attn_rank\" and "
            "\"mlp_rank\"");
    }
  }
  r.finish();
  if (m.moe.enabled() && m.low_rank.enabled()) {
    d.add(path + "/moe",
          "a low-rank (BOOST) model with experts is not modelled: give one of "
          "\"moe\" and \"low_rank\"");
  }
  if (m.heads > 0 && m.hidden % m.heads != 0 && m.explicit_head_dim == 0 && !m.mla.enabled()) {
    d.add(path + "/heads",
          fmt::format("hidden ({}) must be a multiple of heads ({})", m.hidden, m.heads));
  }
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    d.add(path + "/kv_heads",
          fmt::format("heads ({}) must be a multiple of kv_heads ({})", m.heads, m.kv_heads));
  }
}

void read_link(JsonObjectReader& parent, std::string_view key, bool required, Diagnostics& d,
               cost::LinkSpec& link) {
  const json* node = parent.child(key, required);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path(key), d);
  assign(link.bandwidth, r.bandwidth("bandwidth", required, cost::kRanges.bandwidth));
  assign(link.latency, r.time("latency", required, cost::kMaxPerEventDuration));
  if (key == "intra_node") {  // a fully connected mesh: what one peer link carries
    // Zero parses here to get the mesh hint below.
    constexpr cost::QuantityRange kPeer{cost::kRanges.bandwidth.what, 0.0,
                                        cost::kRanges.bandwidth.max, "0 B/s",
                                        cost::kRanges.bandwidth.max_text};
    if (auto peer = r.bandwidth("peer_bandwidth", false, kPeer)) {
      if (!(peer->bytes_per_s > 0)) {
        d.add(r.child_path("peer_bandwidth"),
              "expected a positive bandwidth (a switched fabric such as NVSwitch: leave it out, "
              "or set it equal to bandwidth to switch off a preset's mesh)");
      } else {
        link.peer_bandwidth = *peer;
      }
    }
    // Also when a preset's mesh meets a lower bandwidth given here.
    if (link.bandwidth.bytes_per_s > 0 &&
        link.peer_bandwidth.bytes_per_s > link.bandwidth.bytes_per_s) {
      d.add(r.child_path("peer_bandwidth"),
            fmt::format("{} to one peer exceeds the GPU's intra-node bandwidth ({}); give "
                        "peer_bandwidth <= bandwidth",
                        cost::format_bandwidth(link.peer_bandwidth),
                        cost::format_bandwidth(link.bandwidth)));
    }
  }
  r.finish();
}

std::string joined_peaks(const std::vector<std::string>& names, const std::string& path) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + path + "/peak/" + n;
  return out;
}

// device.peak_clock_mhz, tdp, clock_mhz and power_limit (costmodel/device_clock.hpp): the peaks
// follow the clock; a power cap alone leaves the clock, hence the peaks, unknown.
void read_device_clock(JsonObjectReader& r, const cost::GivenPeaks& given, Diagnostics& d,
                       cost::DeviceSpec& dev) {
  const auto& clock_range = cost::kRanges.clock_mhz;
  const auto& power_range = cost::kRanges.power_watts;
  assign(dev.peak_clock_mhz, r.number("peak_clock_mhz", false, clock_range.min, clock_range.max));
  assign(dev.tdp_watts, r.number("tdp", false, power_range.min, power_range.max));
  const auto clock = r.number("clock_mhz", false, clock_range.min, clock_range.max);
  const auto power = r.number("power_limit", false, power_range.min, power_range.max);
  const std::vector<std::string> unknown = cost::peaks_not_given(dev, given);
  const std::string name = dev.name.empty() ? std::string("the device") : dev.name;
  if (clock) {
    if (dev.peak_clock_mhz > 0 && *clock > dev.peak_clock_mhz) {
      d.add(r.child_path("clock_mhz"),
            fmt::format("{} MHz is above the {} MHz boost clock {}'s peaks are quoted at: give a "
                        "clock at or below it",
                        *clock, dev.peak_clock_mhz, name));
    } else if (dev.peak_clock_mhz > 0) {
      cost::scale_peaks_to_clock(dev, *clock, given);
    } else if (!unknown.empty()) {
      d.add(r.child_path("clock_mhz"),
            fmt::format("{} does not say the clock its peaks are quoted at, so its peaks at {} "
                        "MHz are unknown: give the peak ({}), or device.peak_clock_mhz",
                        name, *clock, joined_peaks(unknown, r.path())));
    } else {
      dev.clock_mhz = *clock;
    }
  }
  if (power) {
    dev.power_limit_watts = *power;
    const bool below_tdp = !(dev.tdp_watts > 0) || *power < dev.tdp_watts;
    if (!clock && below_tdp && !unknown.empty()) {
      const std::string tdp = dev.tdp_watts > 0 ? fmt::format("its TDP of {} W", dev.tdp_watts)
                                                : std::string("an unknown TDP");
      d.add(r.child_path("power_limit"),
            fmt::format("parasim does not know the clock a {} W limit gives {} ({}), so its "
                        "peaks are unknown: give the peak ({}), or device.clock_mhz, the clock "
                        "the cap holds under load",
                        *power, name, tdp, joined_peaks(unknown, r.path())));
    }
  }
}

void read_device(JsonObjectReader& parent, bool required, Diagnostics& d, cost::DeviceSpec& dev) {
  const json* node = parent.child("device", required);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path("device"), d);
  assign(dev.name, r.string("name", false));
  cost::GivenPeaks given;
  if (const json* peak = r.child("peak", required)) {
    JsonObjectReader p(*peak, r.child_path("peak"), d);
    const auto& peak_range = cost::kRanges.peak_or_none;
    auto read_peak = [&p, &peak_range, required](const char* key, bool needed, bool& was_given,
                                                 cost::FlopRate& into) {
      if (auto v = p.flop_rate(key, needed && required, peak_range)) {
        into = *v;
        was_given = true;
      }
    };
    read_peak("bf16", true, given.bf16, dev.peak_bf16);
    read_peak("fp16", false, given.fp16, dev.peak_fp16);
    read_peak("fp32", false, given.fp32, dev.peak_fp32);
    read_peak("tf32", false, given.tf32, dev.peak_tf32);
    read_peak("fp8", false, given.fp8, dev.peak_fp8);
    read_peak("fp4", false, given.fp4, dev.peak_fp4);
    p.finish();
  }
  read_device_clock(r, given, d, dev);
  assign(dev.hbm_capacity, r.bytes("hbm_capacity", required, cost::kRanges.memory_capacity));
  assign(dev.hbm_bandwidth, r.bandwidth("hbm_bandwidth", required, cost::kRanges.bandwidth));
  assign(dev.kernel_launch_overhead,
         r.time("kernel_launch_overhead", false, cost::kMaxPerEventDuration));
  assign(dev.sm_count, r.integer("sm_count", false, 0, 1 << 16));
  if (auto a = r.choice("architecture", false,
                        {"unknown", "ampere", "hopper", "blackwell", "cdna3", "cdna4"})) {
    dev.architecture = *cost::parse_architecture(*a);  // the names of architecture.hpp
  }
  if (const json* kernels = r.child("kernel_efficiency", false)) {
    cost::read_kernel_efficiency(*kernels, r.child_path("kernel_efficiency"), d, dev.kernels);
  }
  r.finish();
}

// cluster.host_memory, host_memory_bandwidth, host_link (a kind) and host_link_bandwidth: the
// host that optimizer offload uses (costmodel/host_system.hpp); the preset's unless given.
void read_host_system(JsonObjectReader& r, Diagnostics& d, cost::HostSpec& h) {
  assign(h.memory, r.bytes("host_memory", false, cost::kRanges.memory_capacity));
  assign(h.memory_bandwidth, r.bandwidth("host_memory_bandwidth", false, cost::kRanges.bandwidth));
  std::vector<std::string> links;
  for (const auto& l : cost::host_link_presets()) links.push_back(l.name);
  if (auto link = choice_of(r, d, "host_link", false, links)) {
    h.link = *link;
    h.link_bandwidth = cost::find_host_link(*link)->bandwidth;
  }
  if (auto bw = r.bandwidth("host_link_bandwidth", false, cost::kRanges.bandwidth)) {
    h.link_bandwidth = *bw;
    if (h.link.empty()) h.link = "custom";
  }
}

void read_cluster(const json& node, Diagnostics& d, const ScenarioLimits& limits,
                  cost::ClusterSpec& c) {
  const std::string path = "/cluster";
  auto use_preset = [&](const std::string& name, const std::string& at) {
    if (const auto* preset = cost::find_cluster_preset(name)) {
      c = preset->spec;
      return true;
    }
    d.add(at, fmt::format("unknown cluster preset \"{}\" (presets: {})", name,
                          preset_names_clusters()));
    return false;
  };
  if (node.is_string()) {
    use_preset(node.get<std::string>(), path);
    return;
  }
  JsonObjectReader r(node, path, d);
  bool from_preset = false;
  if (auto name = r.string("preset", false)) {
    use_preset(*name, r.child_path("preset"));  // reported when unknown; keep reading
    from_preset = true;
  } else {
    c.name = "custom";
  }
  const bool req = !from_preset;
  assign(c.name, r.string("name", false));
  read_device(r, req, d, c.device);
  assign(c.gpus_per_node, r.integer("gpus_per_node", req, 1, 1024));
  assign(c.nodes, r.integer("nodes", false, 1, limits.max_gpus));
  read_link(r, "intra_node", req, d, c.intra_node);
  read_link(r, "inter_node", req, d, c.inter_node);
  assign(c.rails_only, r.boolean("rails_only", false));
  assign(c.gpus_per_host, r.integer("gpus_per_host", false, 1, 1024));
  if (const json* net = r.child("network", false)) {
    // A rail-optimised two-tier fat tree (costmodel/fat_tree.hpp).
    JsonObjectReader n(*net, r.child_path("network"), d);
    assign(c.network.nodes_per_leaf, n.integer("nodes_per_leaf", true, 1, limits.max_gpus));
    assign(c.network.oversubscription, n.number("oversubscription", true, 1.0, 1024.0));
    n.finish();
    if (c.rails_only && c.network.enabled()) {
      d.add(r.child_path("network"),
            "a rails-only fabric has no spine: give one of \"rails_only\" and \"network\"");
    }
  }
  read_host_system(r, d, c.host);
  r.finish();
  if (c.gpus_per_host > 0 && c.gpus_per_node % c.gpus_per_host != 0) {
    d.add(path + "/gpus_per_host",
          fmt::format("gpus_per_host ({}) must divide gpus_per_node ({}): a node (NVLink domain) "
                      "is whole hosts",
                      c.gpus_per_host, c.gpus_per_node));
  }
  if (static_cast<long long>(c.gpus_per_node) * c.nodes > limits.max_gpus) {
    d.add(path, fmt::format("{} GPUs is over the limit of {} GPUs per scenario",
                            static_cast<long long>(c.gpus_per_node) * c.nodes, limits.max_gpus));
  }
}

// training.fp8 (with precision "fp8"): the recipe and its options (precisions.cpp).
void read_fp8(JsonObjectReader& parent, Diagnostics& d, TrainingSpec& t) {
  const json* node = parent.child("fp8", false);
  if (node == nullptr) return;
  const std::string path = parent.child_path("fp8");
  if (!t.fp8.enabled()) {
    d.add(path, "training.fp8 applies with \"precision\": \"fp8\"");
    return;
  }
  JsonObjectReader r(*node, path, d);
  if (auto recipe = registered_choice(r, d, "/training/fp8/recipe")) {
    t.fp8.recipe = *cost::parse_quant_recipe(*recipe);
  }
  if (t.fp8.recipe == cost::QuantRecipe::kTorchaoRowwise) t.fp8.format = Fp8Format::kE4m3;
  if (auto f = registered_choice(r, d, "/training/fp8/format")) {
    t.fp8.format = *f == "e4m3" ? Fp8Format::kE4m3 : Fp8Format::kHybrid;
  }
  assign(t.fp8.param_gather, r.boolean("param_gather", false));
  assign(t.fp8.bf16_layers_at_start, r.integer("bf16_layers_at_start", false, 0, 1 << 16));
  assign(t.fp8.bf16_layers_at_end, r.integer("bf16_layers_at_end", false, 0, 1 << 16));
  r.finish();
}

void read_training(const json& node, Diagnostics& d, TrainingSpec& t) {
  JsonObjectReader r(node, "/training", d);
  assign(t.global_batch, r.integer("global_batch", true, 1, 1 << 30));
  assign(t.micro_batch, r.integer("micro_batch", false, 1, 1 << 20));
  const bool nvfp4 = node.is_object() && node.contains("precision") &&
                     node["precision"].is_string() && node["precision"] == "nvfp4";
  if (nvfp4) {
    // docs/fp8.md, "Not modelled": said here rather than as an unknown choice.
    r.child("precision", false);  // known
    d.add(r.child_path("precision"),
          "nvfp4 is not modelled: NVIDIA's NVFP4 recipe (arXiv 2509.25149; Hadamard transforms on "
          "the wgrad inputs, stochastic rounding, 16x16 weight blocks) has no published kernel "
          "costs beyond Transformer Engine's B300 autocast timings, and parasim has no FP4 GEMM "
          "efficiency for any device; use \"fp8\" (mxfp8 on Blackwell) or bf16");
  } else if (const Entry* p = chosen_by_value(r, d, EntryKind::kPrecision, false)) {
    t.precision = std::get<PrecisionTraits>(p->traits).dtype;
    if (p->value == "fp8") t.fp8.recipe = cost::QuantRecipe::kDelayed;  // Megatron's default
  }
  read_fp8(r, d, t);
  if (const Entry* at = chosen_by_value(r, d, EntryKind::kAttention, false)) {
    t.attention = std::get<AttentionKind>(at->traits);
  }
  if (const Entry* al = chosen_by_value(r, d, EntryKind::kAllocator, false)) {
    t.allocator = std::get<AllocatorTraits>(al->traits).id;
  }
  if (auto g = r.choice("grad_precision", false, {"bf16", "fp16", "fp32"})) {
    if (*g == "fp32") {
      t.fp32_gradients = t.precision != cost::Dtype::kFp32;
    } else if (*g != cost::dtype_name(t.precision)) {
      d.add(r.child_path("grad_precision"),
            fmt::format("gradients are kept in the training precision ({}) or in fp32, not {}",
                        cost::dtype_name(t.precision), *g));
    }
  }
  if (const Entry* rc = chosen_by_value(r, d, EntryKind::kRecompute, false)) {
    t.recompute = std::get<cost::Recompute>(rc->traits);
  }
  if (const json* rm = r.child("recompute_modules", false)) {
    read_recompute_modules(*rm, r.child_path("recompute_modules"), d, t.recompute_modules);
  }
  if (auto m = registered_choice(r, d, "/training/recompute_method")) {
    t.recompute_method = *m == "block"       ? cost::RecomputeMethod::kBlock
                         : *m == "every-nth" ? cost::RecomputeMethod::kEveryNth
                                             : cost::RecomputeMethod::kUniform;
  }
  assign(t.recompute_num_layers, registered_integer(r, "/training/recompute_num_layers"));
  if (const json* f = r.child("framework", false)) {
    read_framework(*f, r.child_path("framework"), d, t.framework);
  }
  r.finish();
}

// The framework's gradient bucket in bytes (0: one bucket per stage), unless the scenario gave
// parallel.dp_bucket.
cost::Bytes framework_bucket(const TrainingSpec& t) {
  const FrameworkSpec& f = t.framework;
  if (f.gradient_bucket_elements > 0) {
    return cost::Bytes{f.gradient_bucket_elements * t.gradient_bytes()};
  }
  return f.gradient_bucket;
}

void read_parallel(const json& node, Diagnostics& d, const ScenarioLimits& limits, ParallelSpec& p,
                   EdgeStageLayers& edge) {
  JsonObjectReader r(node, "/parallel", d);
  assign(p.dp, registered_integer(r, "/parallel/dp"));
  assign(p.tp, registered_integer(r, "/parallel/tp"));
  assign(p.pp, registered_integer(r, "/parallel/pp"));
  assign(p.sequence_parallel, r.boolean("sequence_parallel", false));
  if (const Entry* s = chosen_by_value(r, d, EntryKind::kSchedule, false)) {
    p.schedule = std::get<ScheduleTraits>(s->traits).id;
  }
  assign(p.chunks, registered_integer(r, "/parallel/chunks"));
  // A V-shaped schedule places two chunks per stage: the count a scenario need not write.
  if (places_chunks_in_v(p.schedule) && !r.has("chunks")) p.chunks = kVShapeChunks;
  assign(p.microbatch_group, registered_integer(r, "/parallel/microbatch_group"));
  if (const json* sl = r.child("stage_layers", false)) {
    read_stage_layers(*sl, r.child_path("stage_layers"), d, limits, p);
  }
  edge.first = r.integer("first_stage_layers", false, 1, limits.max_layers);
  edge.last = r.integer("last_stage_layers", false, 1, limits.max_layers);
  if (auto pv = r.boolean("optimizer_post_validation", false)) p.optimizer_post_validation = *pv;
  if (auto fb = r.boolean("overlap_forward_backward", false)) p.overlap_forward_backward = *fb;
  assign(p.cp, registered_integer(r, "/parallel/cp"));
  if (const Entry* v = chosen_by_value(r, d, EntryKind::kContextParallel, false)) {
    p.cp_comm = std::get<ContextParallelTraits>(v->traits).comm;
  }
  assign(p.cp_a2a_size, registered_integer(r, "/parallel/cp_a2a_size"));
  if (const Entry* o = chosen_by_value(r, d, EntryKind::kTpCommOverlap, false)) {
    p.tp_comm_overlap = std::get<TpCommOverlapTraits>(o->traits).id;
  }
  assign(p.tsp_kv_buckets, registered_integer(r, "/parallel/tsp_kv_buckets"));
  if (auto mode = registered_choice(r, d, "/parallel/paci_mode")) {
    p.paci_mode = *mode == "mem" ? PaciMode::kMem : PaciMode::kPerf;
  }
  if (const Entry* pl = chosen_by_value(r, d, EntryKind::kTpPlacement, false)) {
    p.tp_placement = std::get<PlacementTraits>(pl->traits).id;
  }
  assign(p.online_rmsnorm, r.boolean("online_rmsnorm", false));
  assign(p.linear_grouping, r.boolean("linear_grouping", false));
  assign(p.lowrank_checkpointing, r.boolean("lowrank_checkpointing", false));
  if (const Entry* z = chosen_sharding(r, d)) {
    p.zero_stage = std::get<ShardingTraits>(z->traits).zero_stage;
    p.fsdp2.enabled = std::get<ShardingTraits>(z->traits).fsdp2;
  }
  if (const json* f = r.child("fsdp", false)) read_fsdp(*f, d, p.fsdp2);
  assign(p.dp_bucket, r.bytes("dp_bucket", false, cost::kRanges.buffer_size));
  if (auto layout = registered_choice(r, d, "/parallel/dp_bucket_layout")) {
    p.dp_bucket_layout =
        *layout == "megatron" ? DpBucketLayout::kMegatron : DpBucketLayout::kLayers;
  }
  assign(p.overlap_param_gather, r.boolean("overlap_param_gather", false));
  assign(p.ep, registered_integer(r, "/parallel/ep"));
  assign(p.etp, registered_integer(r, "/parallel/etp"));
  assign(p.moe_shared_expert_overlap, r.boolean("moe_shared_expert_overlap", false));
  if (const Entry* e = chosen_by_value(r, d, EntryKind::kDispatcher, false)) {
    p.moe_dispatcher = std::get<DispatcherTraits>(e->traits).id;
  }
  if (const Entry* o = chosen_by_value(r, d, EntryKind::kOffload, false)) {
    p.offload.flavour = std::get<OffloadTraits>(o->traits).flavour;
  }
  assign(p.offload.fraction, r.number("offload_fraction", false, 0.0, 1.0));
  assign(p.offload.overlap, r.boolean("offload_overlap", false));
  assign(p.offload.pin_memory, r.boolean("offload_pin_memory", false));
  assign(p.offload.params, r.boolean("offload_params", false));
  r.finish();
}

void read_optimizer(const json& node, Diagnostics& d, OptimizerSpec& o) {
  JsonObjectReader r(node, "/optimizer", d);
  if (const Entry* name = chosen_by_value(r, d, EntryKind::kOptimizer, true)) {
    o.kind = std::get<OptimizerTraits>(name->traits).kind;
    if (o.kind == OptimizerKind::kDash) {  // DASH's defaults (arXiv 2602.02016)
      o.stacking = std::get<OptimizerTraits>(name->traits).stacking;  // dash-layer's
      o.solver = RootSolver::kNewtonDb;
    }
  }
  assign(o.block_size, registered_integer(r, "/optimizer/block_size"));
  assign(o.precondition_frequency, registered_integer(r, "/optimizer/precondition_frequency"));
  if (auto s = registered_choice(r, d, "/optimizer/solver")) {
    o.solver = *s == "evd"              ? RootSolver::kEvd
               : *s == "coupled-newton" ? RootSolver::kCoupledNewton
               : *s == "newton-db"      ? RootSolver::kNewtonDb
                                        : RootSolver::kChebyshev;
  }
  assign(o.iterations, registered_integer(r, "/optimizer/iterations"));
  assign(o.chebyshev_degree, registered_integer(r, "/optimizer/chebyshev_degree"));
  if (auto s = registered_choice(r, d, "/optimizer/scaling")) {
    o.scaling = *s == "power-iteration" ? RootScaling::kPowerIteration : RootScaling::kFrobenius;
  }
  if (auto p = registered_choice(r, d, "/optimizer/precision")) {
    o.precision = *p == "fp16"   ? cost::Dtype::kFp16
                  : *p == "bf16" ? cost::Dtype::kBf16
                                 : cost::Dtype::kFp32;
  }
  registered_choice(r, d, "/optimizer/grafting");
  assign(o.allow_tf32, r.boolean("allow_tf32", false));
  assign(o.host_op_overhead, r.time("host_op_overhead", false, cost::kMaxPerEventDuration));
  if (auto s = registered_choice(r, d, "/optimizer/stacking")) {
    o.stacking = *s == "gpu" ? Stacking::kGpu : *s == "layer" ? Stacking::kLayer : Stacking::kNone;
  }
  r.finish();
  if (o.kind == OptimizerKind::kShampoo && o.stacking != Stacking::kNone) {
    d.add("/optimizer/stacking",
          "Distributed Shampoo processes blocks one by one; stacking "
          "\"layer\" or \"gpu\" is DASH (\"name\": \"dash\")");
  }
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& file_name,
                        const ScenarioLimits& limits) {
  Diagnostics d(file_name);
  if (text.size() > limits.max_file_bytes) {
    d.add("", cost::file_too_large_message(text.size(), limits.max_file_bytes, "scenario"));
    throw cost::InputError(std::move(d));
  }
  const std::optional<json> document = cost::parse_json_document(text, d);
  if (!document) throw cost::InputError(std::move(d));
  return parse_scenario_document(*document, file_name, limits);
}

Scenario parse_scenario_document(const nlohmann::json& root, const std::string& file_name,
                                 const ScenarioLimits& limits) {
  Diagnostics d(file_name);
  Scenario s;
  s.source_file = file_name;
  JsonObjectReader r(root, "", d);
  if (!r.valid()) throw cost::InputError(std::move(d));
  assign(s.name, r.string("name", false));
  assign(s.description, r.string("description", false));
  r.string("$schema", false);
  if (const json* m = r.child("model", true)) read_model(*m, d, limits, s.model);
  if (const json* c = r.child("cluster", true)) read_cluster(*c, d, limits, s.cluster);
  if (const json* t = r.child("training", true)) read_training(*t, d, s.training);
  EdgeStageLayers edge;
  const auto parallel = root.is_object() ? root.find("parallel") : root.end();
  const bool no_layout = limits.layout_optional && root.is_object() &&
                         (parallel == root.end() || (parallel->is_object() && parallel->empty()));
  if (no_layout) {
    r.child("parallel", false);
    s.layout_given = false;
    s.parallel.dp = std::max(1, s.cluster.total_gpus());
    s.parallel.dp_bucket = framework_bucket(s.training);
  } else if (const json* p = r.child("parallel", true)) {
    read_parallel(*p, d, limits, s.parallel, edge);
    if (!p->is_object() || !p->contains("dp_bucket"))
      s.parallel.dp_bucket = framework_bucket(s.training);
  }
  if (const json* o = r.child("optimizer", false)) read_optimizer(*o, d, s.optimizer);
  r.child("search",
          false);  // `parasim plan`'s axes (planner/search_space.hpp); simulate ignores it
  r.finish();
  if (d.ok() && s.layout_given) resolve_stage_layers(edge, d, s);
  if (d.ok() && s.layout_given) check_scenario_rules(s, d, limits);
  if (!d.ok()) throw cost::InputError(std::move(d));
  if (s.name.empty()) s.name = file_name;
  return s;
}

void check_scenario(const Scenario& scenario, cost::Diagnostics& diagnostics,
                    const ScenarioLimits& limits) {
  check_scenario_rules(scenario, diagnostics, limits);
}

Scenario load_scenario(const std::string& path, const ScenarioLimits& limits) {
  Diagnostics d(path);
  const std::optional<std::string> text =
      cost::read_input_file(path, limits.max_file_bytes, "scenario", d);
  if (!text) throw cost::InputError(std::move(d));
  return parse_scenario(*text, path, limits);
}

}  // namespace parasim::strat
