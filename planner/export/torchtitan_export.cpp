#include "planner/export/torchtitan_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "planner/export/export_common.hpp"
#include "planner/export/fp8_export.hpp"
#include "planner/export/offload_export.hpp"
#include "planner/export/recompute_export.hpp"
#include "planner/export/torchtitan_experts.hpp"
#include "planner/export/torchtitan_settings.hpp"
#include "planner/export/tp_overlap_export.hpp"

namespace parasim::exporter {
namespace {

using strat::PipelineSchedule;
using strat::Scenario;

std::string flag_value(const nlohmann::ordered_json& v) {
  if (v.is_array()) {  // torchtitan 0.3.0 takes a list as comma-separated words ("model,loss";
                       // "--compile.components model loss" is refused: checked with ConfigManager)
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + flag_value(x);
    return out;
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// torchtitan's split of `layers` transformer layers over `stages` virtual stages
// (distributed/pipeline_parallel.py, _generate_llm_fqn_per_model_part @0.3.0): the embedding
// weighs `first_less` layers and the output `last_less`; the effective layers are dealt out
// evenly, the remainder one each to the first stages, and the first and last stages hold their
// share less those weights. Empty when torchtitan raises on it.
std::vector<int> torchtitan_split(int layers, int stages, int first_less, int last_less) {
  const int effective = layers + first_less + last_less;
  if (stages < 2 || stages > effective) return {};
  const int base = effective / stages;
  const int extra = effective % stages;
  if (base == 0 || first_less > base || last_less > base) return {};
  std::vector<int> out;
  int placed = 0;
  for (int st = 0; st < stages; ++st) {
    int share = base + (st < extra ? 1 : 0);
    if (st == 0) share -= first_less;
    if (st == stages - 1) share -= last_less;
    share = std::min(share, layers - placed);  // "if current_layer < num_layers"
    out.push_back(share);
    placed += share;
  }
  if (placed != layers) return {};  // torchtitan would leave layers out of every stage
  return out;
}

// pipeline_parallel_layers_per_stage sets the stage count: ceil(effective / value) virtual
// stages (pipeline_parallel.py, _get_num_virtual_stages @0.3.0); 0 when no value gives `stages`.
int layers_per_stage_for(int effective, int stages) {
  for (int lps = 1; lps <= effective; ++lps) {
    if ((effective + lps - 1) / lps == stages) return lps;
  }
  return 0;
}

// The virtual stages' layers: pipeline_parallel_layers_per_stage and the first/last stage's
// weights that make torchtitan's split equal the scenario's, the smallest weights first (even
// stages: 0 and 0, layers / (pp x chunks) per stage); refused when none does.
void map_stage_split(const Scenario& s, ExportContext& c, Settings& out) {
  const int layers = s.model.layers;
  const int stages = s.parallel.pp * s.parallel.chunks;
  std::vector<int> want;
  for (int v = 0; v < stages; ++v) want.push_back(s.virtual_stage_layers(v));
  for (int total = 0; total <= 2 * layers; ++total) {
    for (int first = std::max(0, total - layers); first <= std::min(total, layers); ++first) {
      const int last = total - first;
      const int lps = layers_per_stage_for(layers + first + last, stages);
      if (lps == 0 || torchtitan_split(layers, stages, first, last) != want) continue;
      out.set("parallelism", "pipeline_parallel_layers_per_stage", lps);
      out.set("parallelism", "pipeline_parallel_first_stage_less_layers", first);
      out.set("parallelism", "pipeline_parallel_last_stage_less_layers", last);
      stage_layers_mapped(s, c,
                          "pipeline_parallel_layers_per_stage, pipeline_parallel_first/"
                          "last_stage_less_layers");
      return;
    }
  }
  // Even stages are always found (weights 0 and 0): only an uneven split gets here.
  stage_layers_refused(s, c,
                       "megatron (--decoder-first/last-pipeline-num-layers) where the stages "
                       "between the first and the last are even",
                       "torchtitan's split with no embedding or output weight");
  out.set("parallelism", "pipeline_parallel_layers_per_stage",
          std::max(1, layers_per_stage_for(layers, stages)));
  out.set("parallelism", "pipeline_parallel_first_stage_less_layers", 0);
  out.set("parallelism", "pipeline_parallel_last_stage_less_layers", 0);
}

// The seam of the pipeline schedule (see megatron_export.cpp): torch.distributed.pipelining's
// schedule names, which torchtitan passes to get_schedule_class.
void map_schedule(const Scenario& s, ExportContext& c, Settings& out) {
  const auto& p = s.parallel;
  if (p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/microbatch_group", "read with interleaved-1f1b only");
  } else if (p.microbatch_group > 0 && p.microbatch_group != p.pp) {
    c.cannot("/parallel/microbatch_group",
             fmt::format("interleaving in groups of {} micro-batches per chunk (Megatron-core's "
                         "--microbatch-group-size-per-virtual-pipeline-stage)",
                         p.microbatch_group),
             "megatron", "Interleaved1F1B's rounds of pp micro-batches");
  } else {
    c.unused("/parallel/microbatch_group", "Interleaved1F1B's rounds of pp micro-batches");
  }
  if (p.pp == 1 && p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/schedule", "no pipeline (pp 1)");
    c.unused("/parallel/chunks", "no pipeline (pp 1)");
    c.unused("/parallel/overlap_forward_backward", "no pipeline (pp 1)");
    stage_layers_mapped(s, c, "");
    return;
  }
  std::string name = "1F1B";  // what a refused schedule is written as (--allow-approximate)
  auto map_as = [&](const char* torchtitan_name) {  // pipeline_parallel_schedule's value
    name = torchtitan_name;
    c.mapped("/parallel/schedule", torchtitan_name);
  };
  switch (p.schedule) {
    case PipelineSchedule::kOneFOneB:
      map_as("1F1B");
      break;
    case PipelineSchedule::kGpipe:
      map_as("GPipe");
      break;
    case PipelineSchedule::kInterleaved:
      map_as("Interleaved1F1B");
      break;
    case PipelineSchedule::kInterleavedZb:
      map_as("InterleavedZeroBubble");
      break;
    case PipelineSchedule::kZbV:  // torchtitan's "v" stage-to-rank mapping, two stages a rank
      map_as("ZBVZeroBubble");
      break;
    case PipelineSchedule::kDualPipeV:
      map_as("DualPipeV");
      // torch.distributed.pipelining runs an OVERLAP_F_B action in sequence unless a custom
      // function is registered; torchtitan registers none.
      if (s.overlaps_forward_backward()) {
        c.cannot("/parallel/overlap_forward_backward",
                 "DualPipeV's forward-backward pairs overlapped (DeepSeek's "
                 "overlapped_forward_backward)",
                 "no export target (torchtitan runs each OVERLAP_F_B pair in sequence without a "
                 "registered custom function)",
                 "the pairs in sequence");
      } else {
        c.mapped("/parallel/overlap_forward_backward",
                 "OVERLAP_F_B actions run in sequence (no custom function)");
      }
      break;
    case PipelineSchedule::kZbH1:
    case PipelineSchedule::kZbH2:
      c.cannot("/parallel/schedule",
               fmt::format("the zero-bubble schedule {}", strat::schedule_name(p.schedule)),
               "no export target (torchtitan's InterleavedZeroBubble and ZBVZeroBubble are "
               "other schedules)",
               "1F1B");
      break;
    case PipelineSchedule::kZb1p:
    case PipelineSchedule::kZb2p:
      refuse_searched_zero_bubble(s, c, "1F1B");
      break;
    case PipelineSchedule::kPipeDream:
    case PipelineSchedule::kPipeDream2BW:
    case PipelineSchedule::kPaci:
      c.cannot("/parallel/schedule",
               fmt::format("the asynchronous {} schedule", strat::schedule_name(p.schedule)),
               "no export target (the papers' own code)", "1F1B (synchronous)");
      break;
    default:
      throw std::logic_error(std::string("torchtitan export: no mapping for the schedule ") +
                             strat::schedule_name(p.schedule));
  }
  if (p.schedule != PipelineSchedule::kDualPipeV) {
    c.unused("/parallel/overlap_forward_backward", "read with dualpipev only");
  }
  out.set("parallelism", "pipeline_parallel_schedule", name);
  map_stage_split(s, c, out);
  out.set("parallelism", "pipeline_parallel_microbatch_size", s.training.micro_batch);
  if (p.chunks > 1) {
    c.mapped("/parallel/chunks", "pipeline_parallel_layers_per_stage");
  } else {
    c.unused("/parallel/chunks", "one model chunk per stage");
  }
}

// FSDP2 (strategies/data_parallel/fsdp2_units.hpp): torchtitan's data_parallel_*_degree and
// fsdp_reshard_after_forward ("default", "always", "never"); its reduce dtype is
// training.grad_precision's (mixed_precision_reduce, mapped with the training section).
void map_fsdp2(const Scenario& s, ExportContext& c, Settings& out) {
  const auto& f = s.parallel.fsdp2;
  c.mapped("/parallel/sharding", "data_parallel_shard_degree (FSDP2)");
  c.mapped("/parallel/zero_stage", "FSDP2 (sharding fsdp2)");
  c.mapped("/parallel/fsdp/replicate", "data_parallel_replicate_degree (HSDP)");
  std::string policy = "default";
  if (f.reshard_after_forward) {
    const int n = *f.reshard_after_forward;
    if (n == strat::Fsdp2Spec::kShardGroup || n == s.parallel.fsdp2_shard()) {
      policy = "always";
    } else if (n == 1) {
      policy = "never";
    } else {
      policy = "always";
      c.cannot("/parallel/fsdp/reshard_after_forward",
               fmt::format("resharding to {} ranks after the forward", n),
               "no export target (fully_shard's own reshard_after_forward=int)",
               "fsdp_reshard_after_forward always");
    }
  }
  if (!f.reshard_after_forward || *f.reshard_after_forward == strat::Fsdp2Spec::kShardGroup ||
      *f.reshard_after_forward == 1 || *f.reshard_after_forward == s.parallel.fsdp2_shard()) {
    c.mapped("/parallel/fsdp/reshard_after_forward", "fsdp_reshard_after_forward");
  }
  out.set("parallelism", "fsdp_reshard_after_forward", policy);
}

void map_data_parallel(const Scenario& s, ExportContext& c, Settings& out) {
  const auto& p = s.parallel;
  int replicate = p.dp, shard = 1;
  std::string reshard;
  if (p.fsdp2.enabled) {
    map_fsdp2(s, c, out);
    replicate = p.fsdp2.replicate;
    shard = p.dp / p.fsdp2.replicate;
  } else if (p.zero_stage == 3) {
    replicate = 1;
    shard = p.dp;
    reshard = "always";  // parameters gathered again for the backward, as ZeRO-3
    c.cannot("/parallel/zero_stage",
             "ZeRO-3's gathers without FSDP2's units, fp32 shards and fp32 reductions "
             "(parasim's zero_stage 3 is DeepSpeed's or FSDP1's)",
             "megatron, deepspeed", "FSDP2, reshard always (sharding \"fsdp2\" models it)");
  } else if (p.zero_stage > 0 && s.replicas() > 1) {
    replicate = 1;
    shard = p.dp;
    reshard = "never";
    c.cannot("/parallel/zero_stage",
             fmt::format("ZeRO stage {} (FSDP2 shards parameters too: ZeRO-3)", p.zero_stage),
             "megatron, deepspeed",
             "FSDP2 with fsdp_reshard_after_forward never (parameters gathered once per step)");
  } else {
    c.mapped("/parallel/zero_stage",
             p.zero_stage == 0 ? "data_parallel_replicate_degree (DDP)" : "no replicas");
  }
  if (!p.fsdp2.enabled) {
    c.mapped("/parallel/sharding", "as zero_stage");
    c.unused("/parallel/fsdp", "sharding is not fsdp2");
  }
  if (p.cp > 1 && !p.fsdp2.enabled) {
    c.cannot("/parallel/cp",
             "context parallelism without FSDP2 (torchtitan shards parameters over the "
             "context-parallel ranks with FSDP2)",
             "megatron", "FSDP2 over the context-parallel ranks");
  }
  out.set("parallelism", "data_parallel_replicate_degree", replicate);
  out.set("parallelism", "data_parallel_shard_degree", shard);
  if (!reshard.empty()) out.set("parallelism", "fsdp_reshard_after_forward", reshard);
  c.mapped("/parallel/dp", "data_parallel_replicate_degree x data_parallel_shard_degree");
  if (map_offload_torchtitan(s, c)) out.set("training", "enable_cpu_offload", true);
  const std::string no_bucket =
      "torchtitan reduces per FSDP2 module or DDP's own buckets: no bucket setting";
  c.not_trainer("/parallel/dp_bucket", no_bucket);
  cover_megatron_ddp_elsewhere(s, c, "FSDP2's per-module reductions or DDP's own buckets");
  for (const char* path :
       {"/training/framework/gradient_reduction", "/training/framework/gradient_bucket",
        "/training/framework/gradient_bucket_elements"}) {
    c.not_trainer(path, no_bucket);
  }
}

void map_parallel(const Scenario& s, const std::string& version, ExportContext& c, Settings& out) {
  const auto& p = s.parallel;
  map_data_parallel(s, c, out);
  out.set("parallelism", "tensor_parallel_degree", p.tp);
  c.mapped("/parallel/tp", "tensor_parallel_degree");
  if (p.tp > 1 && version == "0.3.0") {
    out.set("parallelism", "enable_sequence_parallel", p.sequence_parallel);
    c.mapped("/parallel/sequence_parallel", "enable_sequence_parallel");
  } else if (p.tp > 1 && !p.sequence_parallel) {
    c.cannot("/parallel/sequence_parallel",
             "tensor parallelism without sequence parallelism (0.2.2's plan shards the norms)",
             "megatron, torchtitan 0.3", "tensor parallelism with sequence parallelism");
  } else {
    c.mapped("/parallel/sequence_parallel", p.tp > 1 ? "on (0.2.2's TP plan)" : "no TP");
  }
  map_tp_overlap_torchtitan(s, c, out, version);
  out.set("parallelism", "pipeline_parallel_degree", p.pp);
  cover_stage_layers(s, c, Target::kTorchtitan);
  map_schedule(s, c, out);
  cover_post_validation(s, c);
  cover_paci_mode(s, c);
  out.set("parallelism", "context_parallel_degree", p.cp);
  c.mapped("/parallel/cp", "context_parallel_degree");
  c.unused("/parallel/cp_a2a_size", "torchtitan has no hierarchical context parallelism");
  if (p.cp == 1) {
    c.unused("/parallel/cp_variant", "no context parallelism");
    return;
  }
  if (p.cp_comm == strat::CpComm::kAllToAll || p.cp_comm == strat::CpComm::kAllToAllP2p) {
    // torch's context_parallel shards the sequence and runs ring attention only (its rotate
    // methods pass K/V); it has no head-scattering all-to-all (Ulysses).
    c.cannot("/parallel/cp_variant",
             p.cp_comm == strat::CpComm::kAllToAll ? "Ulysses all-to-all context parallelism"
                                                   : "hierarchical a2a+p2p context parallelism",
             "megatron (--cp-comm-type a2a, a2a+p2p)",
             "ring attention with torchtitan's default rotate method");
    return;
  }
  out.set("parallelism", "context_parallel_load_balancer", "headtail");  // zigzag halves
  if (version == "0.2.2") {
    // torch's rotate methods: allgather gathers every K/V shard first, alltoall passes them on.
    out.set("parallelism", "context_parallel_rotate_method",
            p.cp_comm == strat::CpComm::kAllGather ? "allgather" : "alltoall");
    c.mapped("/parallel/cp_variant", "context_parallel_rotate_method");
  } else if (p.cp_comm == strat::CpComm::kAllGather) {
    c.stated("/parallel/cp_variant",
             "context parallelism: torch's default rotate method (all-gather of K/V); 0.3.0 has "
             "no setting for it");
  } else {
    c.cannot("/parallel/cp_variant", "ring attention's K/V passing (0.3.0 has no rotate method)",
             "torchtitan 0.2 (context_parallel_rotate_method alltoall), megatron",
             "torch's default rotate method");
  }
}

void map_training(const Scenario& s, ExportContext& c, Settings& out) {
  const auto& t = s.training;
  // With a pipeline the local batch is split into micro-batches of pipeline_parallel_microbatch_
  // size; without one the local batch is the micro-batch and gradient accumulation makes up the
  // global batch (trainer.py).
  const int local = s.parallel.pp > 1 ? t.micro_batch * s.micro_batches() : t.micro_batch;
  out.set("training", "local_batch_size", local);
  out.set("training", "global_batch_size", t.global_batch);
  out.set("training", "seq_len", s.model.seq_len);
  c.mapped("/training/micro_batch", "local_batch_size (pipeline_parallel_microbatch_size)");
  c.mapped("/training/global_batch", "global_batch_size");
  c.mapped("/model/seq_len", "training.seq_len");
  if (t.precision == cost::Dtype::kFp16) {
    c.cannot("/training/precision", "fp16 training", "megatron, deepspeed", "bfloat16");
  } else {
    c.mapped("/training/precision", t.fp8.enabled()
                                        ? "mixed_precision_param bfloat16, the linears in FP8 (see "
                                          "/training/fp8/recipe)"
                                        : "mixed_precision_param");
  }
  out.set("training", "mixed_precision_param",
          t.precision == cost::Dtype::kFp32 ? "float32" : "bfloat16");
  if (t.precision != cost::Dtype::kFp32) {
    out.set("training", "mixed_precision_reduce", "float32");
    if (!t.fp32_gradients) {
      c.cannot("/training/grad_precision",
               fmt::format("{} gradients (torchtitan reduces in float32 only)",
                           cost::dtype_name(t.precision)),
               "megatron (--grad-reduce-in-bf16), deepspeed (data_types.grad_accum_dtype)",
               "float32 gradient reduction (\"grad_precision\": \"fp32\")");
    } else {
      c.mapped("/training/grad_precision", "mixed_precision_reduce");
    }
  } else {
    c.unused("/training/grad_precision", "fp32 training");
  }
  if (t.attention == strat::AttentionKind::kFlash) {
    c.stated("/training/attention", "attention: SDPA (FlashAttention), the Llama models' default");
  } else {
    c.cannot("/training/attention", "unfused attention (scores in memory)", "megatron",
             "SDPA (FlashAttention)");
  }
}

// CUDA graphs. 0.3.0 captures the forward and backward of a micro-batch as one graph unless
// --training.disable_cuda_graphs (trainer.py: wrap_with_cuda_graph(self.fwd_bwd_fn)), and not
// with a pipeline (Trainer.Config._validate_cuda_graphs: "CUDA graphs do not support pipeline
// parallelism yet"); 0.2.2 launches eagerly.
void map_cuda_graphs(const Scenario& s, ExportContext& c, Settings& out,
                     const std::string& version) {
  const bool graphs = s.training.framework.cuda_graphs;
  const std::string path = "/training/framework/cuda_graphs";
  if (version != "0.3.0") {
    if (graphs) {
      c.cannot(path, "CUDA graphs replaying each pipeline item with one launch",
               "torchtitan 0.3 (without a pipeline)", "eager kernel launches");
    } else {
      c.mapped(path, "eager kernel launches (0.2.2's)");
    }
    return;
  }
  if (!graphs) {
    out.set("training", "disable_cuda_graphs", true);
    c.mapped(path, "training.disable_cuda_graphs (eager kernel launches)");
  } else if (s.parallel.pp > 1) {
    out.set("training", "disable_cuda_graphs", true);
    c.cannot(path, "CUDA graphs with a pipeline (0.3.0 captures none with pipelining)",
             "no export target", "eager kernel launches (training.disable_cuda_graphs)");
  } else {
    c.stated(path,
             "CUDA graphs: torchtitan 0.3's default, the forward and backward of each "
             "micro-batch captured as one graph (parasim replays each as one launch)");
  }
}

// torch.compile: [compile] enable and components (0.3.0 and 0.2.2 alike: config/configs.py
// CompileConfig, components default ["model", "loss"]; distributed/compile.py compiles each
// TransformerBlock). Off is the trainer's default: nothing written.
void map_compile(const Scenario& s, ExportContext& c, Settings& out) {
  const auto& tc = s.training.framework.compile;
  const std::string path = "/training/framework/compile";
  if (!tc.enabled) {
    c.mapped(path, "eager (compile.enable's default, false)");
    return;
  }
  out.set("compile", "enable", true);
  nlohmann::json components = nlohmann::json::array();
  if (tc.model) components.push_back("model");
  if (tc.loss) components.push_back("loss");
  out.set("compile", "components", components);
  c.mapped(path, fmt::format("compile.enable, compile.components {}", components.dump()));
}

// The recompute mode: tyro subcommand in 0.3.0, [activation_checkpoint] mode in 0.2.2 (with
// `layer_sac`, 0.2.2's every N-th block: mode "selective" with selective_ac_option N).
std::string map_recompute(const Scenario& s, ExportContext& c, bool layer_sac,
                          const std::string& version) {
  switch (s.training.recompute) {
    case cost::Recompute::kNone:
      c.mapped("/training/recompute", "none");
      return "none";
    case cost::Recompute::kFull:
      if (layer_sac) {
        c.mapped("/training/recompute",
                 "activation_checkpoint.mode \"selective\" with a layer count "
                 "(selective_ac_option N: every N-th block checkpointed whole)");
        return "selective";
      }
      c.mapped("/training/recompute", "full");
      return "full";
    case cost::Recompute::kSelective:
      c.cannot("/training/recompute",
               "selective recompute of the attention core (Korthikanti et al.; torchtitan's "
               "selective AC saves matmul and attention outputs per op instead)",
               "megatron (--recompute-granularity selective)", "selective (per-op) AC");
      return "selective";
    case cost::Recompute::kPerOp:
      // 0.3.0: the SelectiveAC subcommand is per-op only; 0.2.2: mode selective, option "op"
      // (torchtitan/distributed/activation_checkpoint.py in each). 0.2.2's save list has no
      // aten._scaled_mm (models/llama3/infra/parallelize.py, _op_sac_save_list): with float8 it
      // reruns every GEMM, which the simulated 0.3.0 policy saves.
      if (version == "0.2.2" && s.training.fp8.enabled()) {
        c.cannot("/training/recompute",
                 "per-op checkpointing with float8 as torchtitan 0.3.0 runs it (every "
                 "_scaled_mm output saved; 0.2.2's save list has no _scaled_mm, so it reruns "
                 "them)",
                 "torchtitan (0.3)", "selective (per-op), 0.2.2's save list");
        return "selective";
      }
      c.mapped("/training/recompute", "selective (per-op)");
      return "selective";
  }
  return "none";
}

void map_model(const Scenario& s, ExportContext& c, const std::string& version,
               const TorchtitanModel& model) {
  const auto& m = s.model;
  const std::string llama = model.module == "llama3"
                                ? "Llama 3's architecture in torchtitan"
                                : "the " + model.module + " model in torchtitan";
  auto require = [&](bool ok, const char* path, const std::string& feature,
                     const std::string& closest) {
    if (ok) {
      c.mapped(path, llama);
    } else {
      c.cannot(path, feature, "megatron", closest);
    }
  };
  require(m.mlp == strat::MlpKind::kSwiglu, "/model/mlp", "a GELU MLP", "SwiGLU");
  require(m.norm == strat::NormKind::kRmsNorm, "/model/norm", "LayerNorm", "RMSNorm");
  require(!m.linear_bias, "/model/linear_bias", "linear biases", "no biases");
  require(!m.qkv_bias || m.linear_bias, "/model/qkv_bias", "QKV biases", "no biases");
  require(!m.learned_positions, "/model/learned_positions", "learned positions", "RoPE");
  require(!m.dropout, "/model/dropout", "dropout", "no dropout");
  std::string where;
  if (!model.config.empty()) {
    where = fmt::format("torchtitan {} builds it as --module {} --config {}", version, model.module,
                        model.config);
  } else if (model.module != "llama3") {
    where = fmt::format("torchtitan {} builds it as model.name {}, model.flavor {}", version,
                        model.module, model.flavor);
  } else {
    where = version == "0.3.0" ? "torchtitan 0.3 takes the model from a config_registry "
                                 "function (--module llama3 --config FUNCTION)"
                               : "torchtitan 0.2 takes the model from a registered flavor "
                                 "(model.flavor names it: register it in llama3_configs)";
  }
  c.stated("/model/layers",
           fmt::format("{}: n_layers {}, dim {}, n_heads {}, n_kv_heads {}, FFN hidden {}, "
                       "vocab_size {}, {} embeddings",
                       where, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.vocab,
                       m.tied_embeddings ? "tied (enable_weight_tying)" : "untied"));
  for (const char* path : {"/model/hidden", "/model/heads", "/model/kv_heads", "/model/ffn_hidden",
                           "/model/vocab", "/model/tied_embeddings"}) {
    c.mapped(path, "stated with /model/layers (the model is code)");
  }
}

void map_optimizer(const Scenario& s, ExportContext& c, Settings& out, const std::string& version) {
  if (version == "0.2.2") out.set("optimizer", "name", "AdamW");
  if (s.optimizer.kind == strat::OptimizerKind::kAdamW) {
    c.mapped("/optimizer/name", version == "0.2.2" ? "optimizer.name AdamW"
                                                   : "AdamW (the config function's default_adamw)");
  } else {
    c.cannot("/optimizer/name",
             fmt::format("the {} optimizer", strat::optimizer_name(s.optimizer.kind)),
             "shampoo (--to shampoo writes its constructor)", "AdamW");
  }
  cover_shampoo_fields(s, c, "part of the optimizer refused at /optimizer/name");
  c.note(
      "the scenario has no learning rate or AdamW hyper-parameters: torchtitan's defaults "
      "apply (lr 8e-4, betas 0.9/0.95, eps 1e-8, weight_decay 0.1)");
}

std::string toml_text(const Settings& settings) {
  std::map<std::string, std::string> sections;
  std::vector<std::string> order;
  for (const Setting& s : settings.items()) {
    if (sections.find(s.section) == sections.end()) order.push_back(s.section);
    sections[s.section] += s.key + " = " + s.value.dump() + "\n";
  }
  std::string out;
  for (const std::string& name : order) {
    out += (out.empty() ? "" : "\n") + std::string("[") + name + "]\n" + sections[name];
  }
  return out;
}

}  // namespace

Rendered write_torchtitan(const Scenario& s, const ExportOptions& o, const std::string& version,
                          ExportContext& c) {
  Settings out;
  cover_not_trainer(s, c);
  cover_launcher(s, c, "torchrun");
  if (s.training.allocator_kind() == strat::AllocatorKind::kCaching) {
    c.note(
        "torchtitan's run_train.sh launches with PYTORCH_ALLOC_CONF=expandable_segments:True; "
        "the step was simulated with PyTorch's default caching allocator "
        "(training.allocator \"caching\"): launch without it to run as simulated");
  }
  cover_framework(s, c, Target::kTorchtitan);
  cover_placements(s, c);
  TorchtitanModel model = map_torchtitan_experts(s, c, out, version);
  map_model(s, c, version, model);
  if (version == "0.2.2") {
    out.set("model", "name", model.module);
    out.set("model", "flavor", model.flavor);
  }
  map_training(s, c, out);
  map_torchtitan_fp8(s, c, out, version, model);  // may pick the model's float8 function
  map_parallel(s, version, c, out);
  map_cuda_graphs(s, c, out, version);
  map_compile(s, c, out);
  // torchtitan 0.2.2's layer selective AC: mode "selective" with selective_ac_option N (its
  // activation_checkpoint.py, _apply_layer_sac); 0.3.0 has no such option.
  const bool every_nth = s.training.recompute == cost::Recompute::kFull &&
                         s.training.recompute_method == cost::RecomputeMethod::kEveryNth &&
                         version == "0.2.2";
  const std::string recompute = map_recompute(s, c, every_nth, version);
  if (every_nth) {
    c.mapped("/training/recompute_method", "activation_checkpoint.mode = \"selective\"");
    c.mapped("/training/recompute_num_layers", "activation_checkpoint.selective_ac_option");
  } else {
    map_recompute_groups(s, c, "full (every block its own checkpoint)",
                         version == "0.2.2"
                             ? "torchtitan 0.2.2's checkpoints hold one block each: full wraps "
                               "every block, selective_ac_option N every N-th"
                             : "torchtitan 0.3.0's full checkpoints every block on its own; it "
                               "has no every-N or block option");
  }
  if (s.training.recompute != cost::Recompute::kSelective) {
    c.unused("/training/recompute_modules", "Megatron's modules, read with \"selective\" only");
  } else {
    c.part_of_refused("/training/recompute_modules",
                      "Megatron's modules, with \"selective\" (refused at /training/recompute)");
  }
  if (version == "0.2.2" && every_nth) {
    out.set("activation_checkpoint", "mode", recompute);
    out.set("activation_checkpoint", "selective_ac_option",
            std::to_string(s.training.recompute_num_layers));
  } else if (version == "0.2.2") {
    out.set("activation_checkpoint", "mode", recompute);
    if (recompute == "selective") out.set("activation_checkpoint", "selective_ac_option", "op");
  }
  map_optimizer(s, c, out, version);
  c.note(version == "0.3.0"
             ? "torchtitan's main branch after 0.3.0 no longer takes training.local_batch_size, "
               "training.global_batch_size, training.seq_len or "
               "parallelism.pipeline_parallel_microbatch_size: run this with the 0.3.0 release"
             : "torchtitan 0.2.2's TOML job file (--job.config_file)");
  if (version == "0.2.2") {
    c.note("run: torchrun ... -m torchtitan.train --job.config_file FILE");
    if (o.json) {
      nlohmann::ordered_json j;
      // A dotted section is a nested table ([quantize.linear.float8]).
      for (const Setting& st : out.items()) {
        std::string pointer = "/" + st.section + "/" + st.key;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        j[nlohmann::ordered_json::json_pointer(pointer)] = st.value;
      }
      return {j.dump(2) + "\n", "", false, ""};
    }
    return {toml_text(out), "# ", true, ""};
  }
  ArgList a;
  if (!model.config.empty()) {  // the model is the config function's: the file names it
    a.add("--module", model.module);
    a.add("--config", model.config);
  }
  for (const Setting& st : out.items()) {
    if (st.value.is_boolean()) {
      // tyro's boolean flags: --section.field-name and --section.no-field-name.
      std::string name = st.key;
      for (char& ch : name) ch = ch == '_' ? '-' : ch;
      a.add("--" + st.section + "." + (st.value.get<bool>() ? "" : "no-") + name);
    } else {
      a.add("--" + st.section + "." + st.key, flag_value(st.value));
    }
  }
  // The policy is a tyro subcommand: it must be the last word. tyro (1.0.17, torchtitan 0.3.0's)
  // reads every word after a subcommand as the subcommand's own and rejects the trainer's flags
  // there (exit 2; checked with ConfigManager.parse_args), so a user's own flags go before it.
  a.add("activation-checkpoint:" + recompute);
  c.note(model.config.empty()
             ? "run: torchrun ... -m torchtitan.train --module llama3 --config FUNCTION $(cat FILE)"
             : "run: torchrun ... -m torchtitan.train $(cat FILE)");
  c.note("activation-checkpoint:" + recompute +
         " is a subcommand and must stay the last word: torchtitan 0.3.0 (tyro) rejects any flag "
         "after it, so put flags of your own before it: ... $(grep -v '^#' FILE | sed '$d') "
         "--training.steps N $(tail -n 1 FILE)");
  if (o.json) return {a.json_list(), "", false, ""};
  return {a.lines(), "# ", false, ""};
}

}  // namespace parasim::exporter
