#include "strategies/input/scenario_parser.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <sstream>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/kernel_efficiency_json.hpp"
#include "costmodel/json_fields.hpp"
#include "strategies/framework/framework_json.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/input/stage_layers_json.hpp"

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
      d.add(path, fmt::format("unknown model preset \"{}\" (presets: {})",
                              node.get<std::string>(), preset_names_models()));
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
  assign(m.learned_positions, r.boolean("learned_positions", false));
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
      m.low_rank.variant = *v == "svd"    ? LowRankVariant::kSvd
                           : *v == "lax"  ? LowRankVariant::kLax
                                          : LowRankVariant::kCola;
    }
    l.finish();
    const int by_ratio = ratio ? static_cast<int>(std::lround(*ratio * m.hidden)) : 0;
    const int both = rank ? static_cast<int>(*rank) : by_ratio;
    m.low_rank.attn_rank = attn ? static_cast<int>(*attn) : both;
    m.low_rank.mlp_rank = mlp ? static_cast<int>(*mlp) : both;
    if (!m.low_rank.enabled() && l.valid()) {
      d.add(l.path(), "expected \"rank\", \"rank_ratio\", or both \"attn_rank\" and "
                              "\"mlp_rank\"");
    }
  }
  r.finish();
  if (m.heads > 0 && m.hidden % m.heads != 0) {
    d.add(path + "/heads", fmt::format("hidden ({}) must be a multiple of heads ({})", m.hidden,
                                       m.heads));
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

void read_device(JsonObjectReader& parent, bool required, Diagnostics& d, cost::DeviceSpec& dev) {
  const json* node = parent.child("device", required);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path("device"), d);
  assign(dev.name, r.string("name", false));
  if (const json* peak = r.child("peak", required)) {
    JsonObjectReader p(*peak, r.child_path("peak"), d);
    const auto& peak_range = cost::kRanges.peak_or_none;
    assign(dev.peak_bf16, p.flop_rate("bf16", required, peak_range));
    assign(dev.peak_fp16, p.flop_rate("fp16", false, peak_range));
    assign(dev.peak_fp32, p.flop_rate("fp32", false, peak_range));
    assign(dev.peak_tf32, p.flop_rate("tf32", false, peak_range));
    assign(dev.peak_fp8, p.flop_rate("fp8", false, peak_range));
    p.finish();
  }
  assign(dev.hbm_capacity, r.bytes("hbm_capacity", required, cost::kRanges.memory_capacity));
  assign(dev.hbm_bandwidth, r.bandwidth("hbm_bandwidth", required, cost::kRanges.bandwidth));
  assign(dev.kernel_launch_overhead,
         r.time("kernel_launch_overhead", false, cost::kMaxPerEventDuration));
  assign(dev.sm_count, r.integer("sm_count", false, 0, 1 << 16));
  if (const json* kernels = r.child("kernel_efficiency", false)) {
    cost::read_kernel_efficiency(*kernels, r.child_path("kernel_efficiency"), d, dev.kernels);
  }
  r.finish();
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
  r.finish();
  if (static_cast<long long>(c.gpus_per_node) * c.nodes > limits.max_gpus) {
    d.add(path, fmt::format("{} GPUs is over the limit of {} GPUs per scenario",
                            static_cast<long long>(c.gpus_per_node) * c.nodes, limits.max_gpus));
  }
}

void read_training(const json& node, Diagnostics& d, TrainingSpec& t) {
  JsonObjectReader r(node, "/training", d);
  assign(t.global_batch, r.integer("global_batch", true, 1, 1 << 30));
  assign(t.micro_batch, r.integer("micro_batch", false, 1, 1 << 20));
  if (auto p = r.choice("precision", false, {"bf16", "fp16", "fp32"})) {
    t.precision = *p == "fp32" ? cost::Dtype::kFp32
                               : (*p == "fp16" ? cost::Dtype::kFp16 : cost::Dtype::kBf16);
  }
  if (auto at = r.choice("attention", false, {"unfused", "flash"})) {
    t.attention = *at == "flash" ? AttentionKind::kFlash : AttentionKind::kUnfused;
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
  if (auto rc = r.choice("recompute", false, {"none", "selective", "full"})) {
    t.recompute = *rc == "full"        ? cost::Recompute::kFull
                  : *rc == "selective" ? cost::Recompute::kSelective
                                       : cost::Recompute::kNone;
  }
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

void read_parallel(const json& node, Diagnostics& d, const ScenarioLimits& limits,
                   ParallelSpec& p, EdgeStageLayers& edge) {
  JsonObjectReader r(node, "/parallel", d);
  assign(p.dp, r.integer("dp", false, 1, 1 << 20));
  assign(p.tp, r.integer("tp", false, 1, 1 << 12));
  assign(p.pp, r.integer("pp", false, 1, 1 << 12));
  assign(p.sequence_parallel, r.boolean("sequence_parallel", false));
  if (auto s = r.choice("schedule", false,
                        {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "zb-1p", "zb-2p",
                         "pipedream", "pipedream-2bw", "paci"})) {
    schedule_from_name(*s, &p.schedule);
  }
  assign(p.chunks, r.integer("chunks", false, 1, 64));
  if (const json* sl = r.child("stage_layers", false)) {
    read_stage_layers(*sl, r.child_path("stage_layers"), d, limits, p);
  }
  edge.first = r.integer("first_stage_layers", false, 1, limits.max_layers);
  edge.last = r.integer("last_stage_layers", false, 1, limits.max_layers);
  if (auto pv = r.boolean("optimizer_post_validation", false)) p.optimizer_post_validation = *pv;
  assign(p.cp, r.integer("cp", false, 1, 1 << 12));
  if (auto v = r.choice("cp_variant", false, {"ring", "allgather"})) p.cp_allgather = *v == "allgather";
  assign(p.tsp_kv_buckets, r.integer("tsp_kv_buckets", false, 1, 1 << 12));
  if (auto mode = r.choice("paci_mode", false, {"perf", "mem"})) {
    p.paci_mode = *mode == "mem" ? PaciMode::kMem : PaciMode::kPerf;
  }
  if (auto pl = r.choice("tp_placement", false, {"megatron", "vanilla", "btp", "tsp"})) {
    p.tp_placement = *pl == "btp"       ? TpPlacement::kBtp
                     : *pl == "vanilla" ? TpPlacement::kVanilla
                     : *pl == "tsp"     ? TpPlacement::kTsp
                                        : TpPlacement::kMegatron;
  }
  assign(p.online_rmsnorm, r.boolean("online_rmsnorm", false));
  assign(p.linear_grouping, r.boolean("linear_grouping", false));
  assign(p.lowrank_checkpointing, r.boolean("lowrank_checkpointing", false));
  assign(p.zero_stage, r.integer("zero_stage", false, 0, 3));
  assign(p.dp_bucket, r.bytes("dp_bucket", false, cost::kRanges.buffer_size));
  r.finish();
}

void read_optimizer(const json& node, Diagnostics& d, OptimizerSpec& o) {
  JsonObjectReader r(node, "/optimizer", d);
  if (auto name = r.choice("name", true, {"adamw", "shampoo", "dash"})) {
    o.kind = *name == "shampoo" ? OptimizerKind::kShampoo
             : *name == "dash"  ? OptimizerKind::kDash
                                : OptimizerKind::kAdamW;
    if (o.kind == OptimizerKind::kDash) {  // DASH's defaults (arXiv 2602.02016)
      o.stacking = Stacking::kLayer;
      o.solver = RootSolver::kNewtonDb;
    }
  }
  assign(o.block_size, r.integer("block_size", false, 16, 1 << 16));
  assign(o.precondition_frequency, r.integer("precondition_frequency", false, 1, 1 << 20));
  if (auto s = r.choice("solver", false, {"evd", "coupled-newton", "newton-db", "chebyshev"})) {
    o.solver = *s == "evd"              ? RootSolver::kEvd
               : *s == "coupled-newton" ? RootSolver::kCoupledNewton
               : *s == "newton-db"      ? RootSolver::kNewtonDb
                                        : RootSolver::kChebyshev;
  }
  assign(o.iterations, r.integer("iterations", false, 1, 1000));
  assign(o.chebyshev_degree, r.integer("chebyshev_degree", false, 2, 1000));
  if (auto s = r.choice("scaling", false, {"frobenius", "power-iteration"})) {
    o.scaling = *s == "power-iteration" ? RootScaling::kPowerIteration : RootScaling::kFrobenius;
  }
  if (auto p = r.choice("precision", false, {"fp32", "fp16", "bf16"})) {
    o.precision = *p == "fp16" ? cost::Dtype::kFp16
                  : *p == "bf16" ? cost::Dtype::kBf16
                                 : cost::Dtype::kFp32;
  }
  r.choice("grafting", false, {"adam"});
  assign(o.allow_tf32, r.boolean("allow_tf32", false));
  assign(o.host_op_overhead, r.time("host_op_overhead", false, cost::kMaxPerEventDuration));
  if (auto s = r.choice("stacking", false, {"none", "layer", "gpu"})) {
    o.stacking = *s == "gpu" ? Stacking::kGpu : *s == "layer" ? Stacking::kLayer : Stacking::kNone;
  }
  r.finish();
  if (o.kind == OptimizerKind::kShampoo && o.stacking != Stacking::kNone) {
    d.add("/optimizer/stacking", "Distributed Shampoo processes blocks one by one; stacking "
                                 "\"layer\" or \"gpu\" is DASH (\"name\": \"dash\")");
  }
}

bool splits_weight_gradient_schedule(PipelineSchedule s) {
  return s == PipelineSchedule::kZbH1 || s == PipelineSchedule::kZbH2 ||
         s == PipelineSchedule::kZb1p || s == PipelineSchedule::kZb2p;
}

// Cross-field rules, reported with the path of the field a user should change.
void check_consistency(const Scenario& s, Diagnostics& d, const ScenarioLimits& limits) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (m.heads > 0 && m.heads % p.tp != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide the number of attention heads ({})",
                                      p.tp, m.heads));
  } else if (m.kv_heads > 0 && m.kv_heads % p.tp != 0) {
    d.add("/parallel/tp",
          fmt::format("tp ({}) must divide the number of kv heads ({})", p.tp, m.kv_heads));
  }
  const long long virtual_stages = static_cast<long long>(p.pp) * p.chunks;
  if (m.layers > 0 && p.pp > m.layers) {
    d.add("/parallel/pp", fmt::format("pp ({}) is larger than the layer count ({}): every "
                                      "pipeline stage needs at least one layer",
                                      p.pp, m.layers));
  } else if (!p.stage_layers.empty()) {
    long long sum = 0;
    for (int n : p.stage_layers) sum += n;
    if (static_cast<long long>(p.stage_layers.size()) != virtual_stages) {
      d.add("/parallel/stage_layers",
            fmt::format("expected {} layer counts (pp x chunks = {} x {}: one per {}stage, in "
                        "the order the layers run), got {}",
                        virtual_stages, p.pp, p.chunks, p.chunks > 1 ? "virtual " : "",
                        p.stage_layers.size()));
    } else if (sum != m.layers) {
      d.add("/parallel/stage_layers", fmt::format("the counts add up to {} layers, but the model "
                                                  "has {} (/model/layers)",
                                                  sum, m.layers));
    }
  } else if (m.layers > 0 && m.layers % (p.pp * p.chunks) != 0) {
    d.add(p.chunks > 1 ? "/parallel/chunks" : "/parallel/pp",
          fmt::format("pp x chunks ({} x {}) must divide the layer count ({}) so that layers "
                      "split evenly over stages; for uneven stages give parallel.stage_layers "
                      "(or first_stage_layers / last_stage_layers)",
                      p.pp, p.chunks, m.layers));
  }
  const bool async = p.schedule == PipelineSchedule::kPipeDream ||
                     p.schedule == PipelineSchedule::kPipeDream2BW ||
                     p.schedule == PipelineSchedule::kPaci;
  if (p.chunks > 1 && p.schedule != PipelineSchedule::kInterleaved) {
    d.add("/parallel/chunks", "chunks > 1 needs \"schedule\": \"interleaved-1f1b\"");
  }
  if (p.schedule == PipelineSchedule::kInterleaved && t.global_batch > 0 &&
      t.global_batch % (static_cast<long long>(t.micro_batch) * p.dp) == 0 &&
      (t.global_batch / (t.micro_batch * p.dp)) % p.pp != 0) {
    d.add("/training/global_batch",
          fmt::format("interleaved-1f1b needs the micro-batch count ({}) to be a multiple of pp "
                      "({})",
                      t.global_batch / (t.micro_batch * p.dp), p.pp));
  }
  if (async && s.optimizer.kind != OptimizerKind::kAdamW) {
    d.add("/optimizer/name", fmt::format("{} steps each stage's optimizer on its own; parasim "
                                         "models that with adamw (got {})",
                                         schedule_name(p.schedule),
                                         optimizer_name(s.optimizer.kind)));
  }
  if (async && (p.dp != 1 || p.zero_stage != 0)) {
    d.add("/parallel/schedule",
          fmt::format("{} runs stage-local optimizer steps; parasim models it with dp = 1 and "
                      "zero_stage 0 (got dp {}, zero_stage {})",
                      schedule_name(p.schedule), p.dp, p.zero_stage));
  }
  if (p.zero_stage == 3 && p.schedule != PipelineSchedule::kGpipe &&
      p.schedule != PipelineSchedule::kOneFOneB) {
    d.add("/parallel/zero_stage", fmt::format("zero_stage 3 is modelled with gpipe and 1f1b only "
                                              "(got {})",
                                              schedule_name(p.schedule)));
  }
  const bool low_rank = m.low_rank.enabled();
  if (low_rank && p.tp_placement == TpPlacement::kMegatron) {
    d.add("/parallel/tp_placement", "a low-rank model needs \"tp_placement\": \"vanilla\" or "
                                    "\"btp\" (megatron is for dense models)");
  }
  if (p.tp_placement == TpPlacement::kTsp) {
    if (low_rank || p.sequence_parallel || p.cp > 1 || t.attention != AttentionKind::kFlash ||
        m.seq_len % p.tp != 0 || p.zero_stage == 3 || splits_weight_gradient_schedule(p.schedule) ||
        t.recompute == cost::Recompute::kSelective) {
      d.add("/parallel/tp_placement",
            "tsp folds sequence and tensor parallelism on tp = D ranks: it needs a dense model, "
            "\"attention\": \"flash\", seq_len divisible by tp, and no sequence_parallel, cp, "
            "zero_stage 3, zero-bubble schedule or selective recompute (FlashAttention leaves "
            "nothing for it; \"full\" is supported)");
    }
    if (p.tsp_kv_buckets > 1 && m.kv_heads > 0 &&
        m.kv_heads % (static_cast<long long>(p.tp) * p.tsp_kv_buckets) != 0) {
      d.add("/parallel/tsp_kv_buckets",
            fmt::format("tsp_kv_buckets ({}) must divide each round's kv heads: kv_heads ({}) "
                        "must be a multiple of tp x tsp_kv_buckets ({} x {})",
                        p.tsp_kv_buckets, m.kv_heads, p.tp, p.tsp_kv_buckets));
    }
  } else {
    if (!low_rank && p.tp_placement != TpPlacement::kMegatron) {
      d.add("/parallel/tp_placement", fmt::format("\"{}\" needs a low-rank model (add "
                                                  "/model/low_rank)",
                                                  tp_placement_name(p.tp_placement)));
    }
    if (p.tsp_kv_buckets != 1) {
      d.add("/parallel/tsp_kv_buckets",
            "tsp_kv_buckets applies to \"tp_placement\": \"tsp\" only");
    }
  }
  if (low_rank && p.tp_placement == TpPlacement::kVanilla &&
      (m.low_rank.attn_rank % p.tp != 0 || m.low_rank.mlp_rank % p.tp != 0)) {
    d.add("/model/low_rank", fmt::format("vanilla low-rank TP splits the ranks ({}, {}) over tp "
                                         "({}); they must be multiples of it",
                                         m.low_rank.attn_rank, m.low_rank.mlp_rank, p.tp));
  }
  if (low_rank && (p.sequence_parallel || splits_weight_gradient_schedule(p.schedule) ||
                   t.recompute != cost::Recompute::kNone)) {
    d.add("/parallel", "low-rank placements are modelled without sequence parallelism, zero-bubble "
                       "schedules or Korthikanti recompute (use lowrank_checkpointing)");
  }
  if (p.lowrank_checkpointing && p.tp_placement != TpPlacement::kBtp) {
    d.add("/parallel/lowrank_checkpointing", "low-rank checkpointing applies to \"btp\"");
  }
  if (p.paci_mode == PaciMode::kMem && p.schedule != PipelineSchedule::kPaci) {
    d.add("/parallel/paci_mode", "paci_mode applies to \"schedule\": \"paci\" only");
  }
  if (p.optimizer_post_validation && !splits_weight_gradient_schedule(p.schedule)) {
    d.add("/parallel/optimizer_post_validation",
          fmt::format("optimizer post-validation applies to the zero-bubble schedules (zb-h1, "
                      "zb-h2, zb-1p, zb-2p), not {}",
                      schedule_name(p.schedule)));
  }
  const long long per_step = static_cast<long long>(t.micro_batch) * p.dp;
  if (t.global_batch > 0 && t.global_batch % per_step != 0) {
    d.add("/training/global_batch",
          fmt::format("global_batch ({}) must be a multiple of micro_batch x dp ({} x {} = {})",
                      t.global_batch, t.micro_batch, p.dp, per_step));
  } else if (t.global_batch > 0 && t.global_batch / per_step > limits.max_micro_batches) {
    d.add("/training/global_batch",
          fmt::format("{} micro-batches per step is over the limit of {}",
                      t.global_batch / per_step, limits.max_micro_batches));
  }
  const long long gpus = static_cast<long long>(p.dp) * p.tp * p.pp * p.cp;
  if (gpus != s.cluster.total_gpus() && s.cluster.total_gpus() > 0) {
    d.add("/parallel", fmt::format("dp x tp x pp x cp = {} x {} x {} x {} = {} GPUs, but the "
                                   "cluster has {} ({} nodes x {} GPUs); change the degrees or "
                                   "/cluster/nodes",
                                   p.dp, p.tp, p.pp, p.cp, gpus, s.cluster.total_gpus(),
                                   s.cluster.nodes, s.cluster.gpus_per_node));
  }
  if (p.cp > 1) {
    if (m.seq_len % (2 * p.cp) != 0) {
      d.add("/parallel/cp", fmt::format("the sequence ({}) must split into 2 x cp = {} chunks "
                                        "(zigzag causal balance)",
                                        m.seq_len, 2 * p.cp));
    }
    if (t.attention != AttentionKind::kFlash) {
      d.add("/training/attention", "context parallelism runs with \"attention\": \"flash\" "
                                   "(ring attention exchanges K/V blocks of a fused kernel)");
    }
    if (m.low_rank.enabled() || p.zero_stage == 3 || p.chunks > 1 ||
        splits_weight_gradient_schedule(p.schedule)) {
      d.add("/parallel/cp", "cp > 1 is modelled without low-rank placements, zero_stage 3, "
                            "interleaving or zero-bubble schedules");
    }
  }
  const int gpn = s.cluster.gpus_per_node;
  if (p.tp > 1 && p.tp <= gpn && gpn % p.tp != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide gpus_per_node ({}) so that tensor-"
                                      "parallel groups do not straddle nodes unevenly",
                                      p.tp, gpn));
  } else if (p.tp > gpn && p.tp % gpn != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) spans nodes, so it must be a multiple of "
                                      "gpus_per_node ({})",
                                      p.tp, gpn));
  }
  // Every data-parallel group must have the same number of members on each node it spans (the
  // collective model takes members per node); rank = tp_rank + tp * (dp_rank + dp * stage).
  const int replicas = p.dp * p.cp;
  if (replicas > 1 && gpn > 0 && gpus == s.cluster.total_gpus()) {
    bool uneven = false;
    for (long long stage = 0; stage < p.pp && !uneven; ++stage) {
      for (long long r = 0; r < p.tp && r < 64 && !uneven; ++r) {
        std::map<long long, int> per_node;
        for (long long dr = 0; dr < replicas; ++dr) {
          ++per_node[(r + p.tp * (dr + replicas * stage)) / gpn];
        }
        for (const auto& [node, count] : per_node) uneven = uneven || count != per_node.begin()->second;
      }
    }
    if (uneven) {
      d.add("/parallel/dp", fmt::format("data-parallel groups of {} (dp x cp) would sit unevenly "
                                        "on nodes of {} GPUs (tp {}); choose dp, cp, tp and "
                                        "gpus_per_node so that each group has the same number of "
                                        "GPUs on every node",
                                        replicas, gpn, p.tp));
    }
  }
  // Rails-only: a pipeline hop goes from rank x to x + tp*dp*cp; between nodes it must keep its
  // local index, so that stride must be a multiple of gpus_per_node.
  if (s.cluster.rails_only && p.pp > 1 && s.cluster.nodes > 1 && gpn > 0 &&
      (static_cast<long long>(p.tp) * p.dp * p.cp) % gpn != 0 &&
      static_cast<long long>(p.tp) * p.dp * p.cp * p.pp > gpn) {
    d.add("/cluster/rails_only",
          fmt::format("on a rails-only fabric pipeline hops between nodes must stay on a rail: "
                      "tp x dp x cp ({}) must be a multiple of gpus_per_node ({})",
                      static_cast<long long>(p.tp) * p.dp * p.cp, gpn));
  }
  // Rails-only: a context-parallel ring hops from replica c to c + 1 (stride tp); a TSP weight
  // ring from tp rank t to t + 1. Between nodes either keeps its local index only when the stride
  // is a multiple of gpus_per_node.
  if (s.cluster.rails_only && s.cluster.nodes > 1 && gpn > 0) {
    // A group is tp x cp consecutive GPUs: it stays in a node when tp x cp divides gpn;
    // otherwise some group crosses a node with a hop of tp, on a rail only if gpn divides tp.
    const long long group = static_cast<long long>(p.tp) * p.cp;
    if (p.cp > 1 && p.tp % gpn != 0 && gpn % group != 0) {
      d.add("/cluster/rails_only",
            fmt::format("on a rails-only fabric the context-parallel ring must stay on a rail "
                        "between nodes: groups of tp x cp = {} GPUs cross nodes with hops of "
                        "tp = {} GPUs, which change the local index; use tp a multiple of "
                        "gpus_per_node ({}) or tp x cp dividing gpus_per_node",
                        group, p.tp, gpn));
    }
    if (p.tp_placement == TpPlacement::kTsp && p.tp > gpn) {
      d.add("/cluster/rails_only",
            fmt::format("on a rails-only fabric TSP's weight ring cannot cross nodes (its hop "
                        "from the last GPU of a node to the first of the next changes the local "
                        "index): keep tp ({}) <= gpus_per_node ({})",
                        p.tp, gpn));
    }
  }
  if (m.hidden > 0 && (m.hidden % p.tp != 0 || m.ffn_hidden % p.tp != 0)) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide hidden ({}) and ffn_hidden ({})", p.tp,
                                      m.hidden, m.ffn_hidden));
  }
  if (p.sequence_parallel && p.tp == 1) {
    d.add("/parallel/sequence_parallel", "sequence parallelism needs tp > 1");
  }
  if (s.cluster.device.peak(t.precision).flop_per_s <= 0) {
    d.add("/training/precision", fmt::format("the device has no {} peak FLOP rate; add "
                                             "/cluster/device/peak/{}",
                                             cost::dtype_name(t.precision),
                                             cost::dtype_name(t.precision)));
  }
}

}  // namespace

const char* optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::kAdamW: return "adamw";
    case OptimizerKind::kShampoo: return "shampoo";
    case OptimizerKind::kDash: return "dash";
  }
  return "?";
}

const char* root_solver_name(RootSolver s) {
  switch (s) {
    case RootSolver::kEvd: return "evd";
    case RootSolver::kCoupledNewton: return "coupled-newton";
    case RootSolver::kNewtonDb: return "newton-db";
    case RootSolver::kChebyshev: return "chebyshev";
  }
  return "?";
}

const char* stacking_name(Stacking s) {
  switch (s) {
    case Stacking::kNone: return "none";
    case Stacking::kLayer: return "layer";
    case Stacking::kGpu: return "gpu";
  }
  return "?";
}

const char* tp_placement_name(TpPlacement p) {
  switch (p) {
    case TpPlacement::kMegatron: return "megatron";
    case TpPlacement::kVanilla: return "vanilla";
    case TpPlacement::kBtp: return "btp";
    case TpPlacement::kTsp: return "tsp";
  }
  return "?";
}

const char* schedule_name(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneFOneB: return "1f1b";
    case PipelineSchedule::kInterleaved: return "interleaved-1f1b";
    case PipelineSchedule::kZbH1: return "zb-h1";
    case PipelineSchedule::kZbH2: return "zb-h2";
    case PipelineSchedule::kPipeDream: return "pipedream";
    case PipelineSchedule::kPipeDream2BW: return "pipedream-2bw";
    case PipelineSchedule::kPaci: return "paci";
    case PipelineSchedule::kZb1p: return "zb-1p";
    case PipelineSchedule::kZb2p: return "zb-2p";
  }
  return "?";
}

bool schedule_from_name(std::string_view name, PipelineSchedule* out) {
  for (PipelineSchedule s : kAllSchedules) {
    if (name == schedule_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

Scenario parse_scenario(std::string_view text, const std::string& file_name,
                        const ScenarioLimits& limits) {
  Diagnostics d(file_name);
  if (text.size() > limits.max_file_bytes) {
    d.add("", cost::file_too_large_message(text.size(), limits.max_file_bytes, "scenario"));
    throw cost::InputError(std::move(d));
  }
  const std::optional<json> document = cost::parse_json_document(text, d);
  if (!document) throw cost::InputError(std::move(d));
  const json& root = *document;
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
  if (const json* p = r.child("parallel", true)) {
    read_parallel(*p, d, limits, s.parallel, edge);
    if (!p->is_object() || !p->contains("dp_bucket")) s.parallel.dp_bucket = framework_bucket(s.training);
  }
  if (const json* o = r.child("optimizer", false)) read_optimizer(*o, d, s.optimizer);
  r.child("search", false);  // `parasim plan`'s axes (planner/search_space.hpp); simulate ignores it
  r.finish();
  if (d.ok()) resolve_stage_layers(edge, d, s);
  if (d.ok()) check_consistency(s, d, limits);
  if (!d.ok()) throw cost::InputError(std::move(d));
  if (s.name.empty()) s.name = file_name;
  return s;
}

void check_scenario(const Scenario& scenario, cost::Diagnostics& diagnostics,
                    const ScenarioLimits& limits) {
  check_consistency(scenario, diagnostics, limits);
}

Scenario load_scenario(const std::string& path, const ScenarioLimits& limits) {
  Diagnostics d(path);
  const std::optional<std::string> text =
      cost::read_input_file(path, limits.max_file_bytes, "scenario", d);
  if (!text) throw cost::InputError(std::move(d));
  return parse_scenario(*text, path, limits);
}

}  // namespace parasim::strat
