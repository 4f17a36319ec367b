#include "planner/export/deepspeed_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <nlohmann/ordered_map.hpp>

#include "planner/export/export_common.hpp"
#include "planner/export/fp8_export.hpp"
#include "planner/export/offload_export.hpp"
#include "planner/export/recompute_export.hpp"
#include "planner/export/tp_overlap_export.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::exporter {
namespace {

using Json = nlohmann::ordered_json;
using strat::PipelineSchedule;
using strat::Scenario;

// The seam of the pipeline schedule (see megatron_export.cpp).
void map_schedule(const Scenario& s, ExportContext& c) {
  const auto& p = s.parallel;
  if (p.schedule == PipelineSchedule::kDualPipeV && p.pp > 1) {
    c.part_of_refused("/parallel/overlap_forward_backward", "dualpipev's (see /parallel/schedule)");
  } else {
    c.unused("/parallel/overlap_forward_backward", "read with dualpipev only");
  }
  if (p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/microbatch_group", "read with interleaved-1f1b only");
  } else {
    c.part_of_refused("/parallel/microbatch_group",
                      "the interleaved schedule (see /parallel/schedule)");
  }
  if (p.pp == 1 && p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/schedule", "no pipeline (pp 1)");
    c.unused("/parallel/chunks", "no pipeline (pp 1)");
    return;
  }
  if (p.chunks > 1) {
    c.part_of_refused("/parallel/chunks", "the schedule's chunks (see /parallel/schedule)");
  } else {
    c.unused("/parallel/chunks", "one model chunk per stage");
  }
  switch (p.schedule) {
    case PipelineSchedule::kOneFOneB:
      c.mapped("/parallel/schedule", "DeepSpeed's pipeline TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kGpipe:
      c.cannot("/parallel/schedule", "the gpipe schedule", "torchtitan (GPipe)",
               "DeepSpeed's TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kInterleaved:
      c.cannot("/parallel/schedule", "the interleaved-1f1b schedule",
               "megatron, torchtitan (Interleaved1F1B)", "DeepSpeed's TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kZbH1:
    case PipelineSchedule::kZbH2:
      c.cannot("/parallel/schedule",
               fmt::format("the zero-bubble schedule {}", strat::schedule_name(p.schedule)),
               "no export target", "DeepSpeed's TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kZb1p:
    case PipelineSchedule::kZb2p:
      refuse_searched_zero_bubble(s, c, "DeepSpeed's TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kInterleavedZb:
    case PipelineSchedule::kZbV:
    case PipelineSchedule::kDualPipeV:
      c.cannot("/parallel/schedule",
               fmt::format("the {} schedule", strat::schedule_name(p.schedule)),
               "torchtitan (InterleavedZeroBubble, ZBVZeroBubble, DualPipeV)",
               "DeepSpeed's TrainSchedule (1F1B)");
      return;
    case PipelineSchedule::kPipeDream:
    case PipelineSchedule::kPipeDream2BW:
    case PipelineSchedule::kPaci:
      c.cannot("/parallel/schedule",
               fmt::format("the asynchronous {} schedule", strat::schedule_name(p.schedule)),
               "no export target (the papers' own code)", "DeepSpeed's TrainSchedule (1F1B)");
      return;
  }
  throw std::logic_error(std::string("deepspeed export: no mapping for the schedule ") +
                         strat::schedule_name(p.schedule));
}

// Gradients of the largest stage on one rank: a bucket at least this large holds them all.
long long largest_stage_gradients(const Scenario& s) {
  double most = 0;
  for (int st = 0; st < s.parallel.pp; ++st) {
    most = std::max(
        most, s.stage_layer_count(st) * strat::layer_params_per_tp_rank(s.model, s.parallel.tp) +
                  strat::embedding_params_per_tp_rank(s.model, s.parallel.tp, st, s.head_stage()));
  }
  return static_cast<long long>(std::ceil(most));
}

// ZeRO-3 gathered per module, as simulated (framework.hpp, Zero3Gathering; zero3_resident.hpp):
// the coordinator's settings the step's memory and gathers were simulated with. Gathered per
// layer (a framework other than DeepSpeed's): no gradient bucket buffer, as simulated.
void map_zero3_gathering(const Scenario& s, ExportContext& c, Json& zero) {
  const auto& z3 = s.training.framework.zero3;
  if (s.parallel.zero_stage != 3) return;
  if (z3.unit != strat::Zero3Gather::kPerModule) {
    // Simulated without DeepSpeed's bucket buffer: keep the trainer from allocating one of
    // reduce_bucket_size elements (contiguous_gradients is on by default, config.py L95).
    zero["contiguous_gradients"] = false;
    return;
  }
  zero["stage3_param_persistence_threshold"] = static_cast<long long>(z3.persistence_threshold);
  zero["stage3_prefetch_bucket_size"] = static_cast<long long>(z3.prefetch_bucket_size);
  zero["stage3_max_live_parameters"] = static_cast<long long>(z3.max_live_parameters);
  zero["stage3_max_reuse_distance"] = static_cast<long long>(z3.max_reuse_distance);
  zero["contiguous_gradients"] = z3.contiguous_gradients;
  c.mapped("/training/framework/zero3",
           "zero_optimization.stage3_param_persistence_threshold, stage3_prefetch_bucket_size, "
           "stage3_max_live_parameters, stage3_max_reuse_distance, contiguous_gradients");
}

// The data-parallel reduction. ZeRO-0: the engine reduces after the backward in buckets of
// MEMORY_OPT_ALLREDUCE_SIZE = 5e8 gradients, no setting (runtime/engine.py L151 and
// allreduce_gradients). ZeRO 1-3: the gradient hooks reduce a bucket of reduce_bucket_size
// gradients as soon as it fills (overlap_comm: on a side stream), as parasim's overlapped
// policy; a bucket that holds every gradient of the stage goes once the backward ends, which is
// the after-backward policy with one bucket.
void map_reduction(const Scenario& s, ExportContext& c, Json& zero) {
  const auto& p = s.parallel;
  cover_cuda_graphs_eager_target(s, c);
  if (s.replicas() == 1) {
    c.unused("/parallel/dp_bucket", "no data-parallel replicas");
    cover_framework_reduction(s, c, "");
    return;
  }
  // ZeRO-3's gradients are reduce-scattered layer by layer as the backward produces them
  // (the builder's zero3_reduce), whatever the framework's policy for whole buckets.
  const bool overlapped = p.zero_stage == 3 || s.training.framework.gradient_reduction ==
                                                   strat::GradientReduction::kOverlapped;
  const long long all = largest_stage_gradients(s);
  const long long elements = p.dp_bucket.value <= 0 ? all : bucket_elements(s);
  const bool one_bucket = elements >= all;
  constexpr long long kEngineBucket = 500000000;  // MEMORY_OPT_ALLREDUCE_SIZE, engine.py L151
  if (p.zero_stage == 0) {
    // The engine's buckets match the scenario's: the same size after the backward, or one
    // bucket of every gradient either way.
    const bool exact =
        (one_bucket && all <= kEngineBucket) || (!overlapped && elements == kEngineBucket);
    if (exact) {
      c.mapped("/parallel/dp_bucket",
               "DeepSpeed's engine: after the backward in buckets of 5e8 gradients (no setting)");
      cover_framework_reduction(s, c, "DeepSpeed's engine reduction (see /parallel/dp_bucket)");
    } else {
      c.cannot("/parallel/dp_bucket",
               fmt::format("the ZeRO-0 data-parallel reduction in buckets of {} gradients{}",
                           elements, overlapped ? ", each as soon as it is ready" : ""),
               "megatron (--overlap-grad-reduce --ddp-bucket-size)",
               "DeepSpeed's engine: after the backward in buckets of 5e8 gradients");
      c.part_of_refused("/training/framework/gradient_reduction", "part of /parallel/dp_bucket");
      c.part_of_refused("/training/framework/gradient_bucket", "part of /parallel/dp_bucket");
      c.part_of_refused("/training/framework/gradient_bucket_elements",
                        "part of /parallel/dp_bucket");
    }
    return;
  }
  if (p.zero_stage == 3) {
    // parasim reduce-scatters ZeRO-3's gradients layer by layer (zero3_reduce) and holds a
    // bucket buffer of one layer's gradients (workload_builder.cpp): DeepSpeed does the same with
    // a bucket of exactly one layer's gradients, flushed when the next layer's first gradient
    // would overflow it (stage3.py reduce_independent_p_g_buckets_and_remove_grads).
    const long long layer =
        static_cast<long long>(std::ceil(strat::layer_params_per_tp_rank(s.model, p.tp)));
    zero["overlap_comm"] = true;
    zero["reduce_bucket_size"] = layer;
    zero["allgather_bucket_size"] = layer;
    c.mapped("/parallel/dp_bucket",
             "zero_optimization.reduce_bucket_size: one layer's gradients (ZeRO-3 reduce-scatters "
             "layer by layer, as simulated; the scenario's bucket does not apply to ZeRO-3)");
    cover_framework_reduction(s, c, "zero_optimization.overlap_comm, reduce_bucket_size");
    return;
  }
  zero["overlap_comm"] = overlapped;
  zero["reduce_bucket_size"] = elements;
  zero["allgather_bucket_size"] = elements;
  c.mapped("/parallel/dp_bucket",
           one_bucket ? "zero_optimization.reduce_bucket_size (elements): the stage's "
                        "gradients in one bucket"
                      : "zero_optimization.reduce_bucket_size (elements), overlap_comm");
  if (overlapped || one_bucket) {
    cover_framework_reduction(s, c, "zero_optimization.overlap_comm, reduce_bucket_size");
  } else {
    c.cannot("/training/framework/gradient_reduction",
             fmt::format("the data-parallel reduction after the backward in buckets of {} "
                         "gradients (ZeRO's hooks reduce each bucket as it fills)",
                         elements),
             "deepspeed with ZeRO-0 (its engine's 5e8-gradient buckets)",
             "each bucket as soon as it fills (overlap_comm false)");
    c.part_of_refused("/training/framework/gradient_bucket",
                      "part of /training/framework/gradient_reduction");
    c.part_of_refused("/training/framework/gradient_bucket_elements",
                      "part of /training/framework/gradient_reduction");
  }
}

void map_parallel(const Scenario& s, ExportContext& c, Json& j) {
  const auto& p = s.parallel;
  c.stated("/parallel/dp",
           fmt::format("DeepSpeed's data-parallel size is the mpu's (world / (tp x pp) = {}) or "
                       "the world size without one",
                       p.dp));
  if (p.tp > 1 && p.pp > 1) {
    // AutoTP beside a PipelineModule does not start in 0.19.8: the engine broadcasts the
    // parameters over AutoTP's data-parallel groups, which span the pipeline's stages, and the
    // collective is mismatched (engine.py _broadcast_model, L2050-2061; scripts/check-exports.sh
    // runs it: gloo aborts).
    j["tensor_parallel"] = Json{{"autotp_size", p.tp}};
    c.cannot("/parallel/tp",
             fmt::format("tensor parallelism (AutoTP, {} ranks) beside pipeline parallelism "
                         "(DeepSpeed 0.19.8's engine cannot start that pair)",
                         p.tp),
             "megatron, torchtitan", "tensor_parallel.autotp_size with the pipeline (fails)");
  } else if (p.tp > 1) {
    j["tensor_parallel"] = Json{{"autotp_size", p.tp}};
    c.mapped("/parallel/tp", "tensor_parallel.autotp_size");
  } else {
    c.mapped("/parallel/tp", "no tensor parallelism");
  }
  if (p.sequence_parallel) {
    c.cannot("/parallel/sequence_parallel", "Megatron sequence parallelism", "megatron, torchtitan",
             "tensor parallelism without sequence parallelism");
  } else {
    c.mapped("/parallel/sequence_parallel", "off");
  }
  map_tp_overlap_deepspeed(s, c);
  if (p.cp > 1) {
    // DeepSpeed's Ulysses is model code (deepspeed/sequence/layer.py DistributedAttention over a
    // sequence-parallel group from the mpu or runtime/sequence_parallel/parallel_state_sp.py):
    // its configuration has no key for it, nor for ring attention.
    const bool all_to_all =
        p.cp_comm == strat::CpComm::kAllToAll || p.cp_comm == strat::CpComm::kAllToAllP2p;
    c.cannot("/parallel/cp",
             all_to_all ? "all-to-all context parallelism (DeepSpeed's Ulysses, "
                          "DistributedAttention, is set up in model code; its configuration has "
                          "no key for it)"
                        : "context parallelism (ring attention)",
             all_to_all
                 ? "megatron (--cp-comm-type a2a, a2a+p2p)"
                 : "megatron (--context-parallel-size), torchtitan (context_parallel_degree)",
             "no context parallelism");
    c.part_of_refused("/parallel/cp_variant", "part of the refused context parallelism");
    c.part_of_refused("/parallel/cp_a2a_size", "part of the refused context parallelism");
  } else {
    c.mapped("/parallel/cp", "none");
    c.unused("/parallel/cp_variant", "no context parallelism");
    c.unused("/parallel/cp_a2a_size", "no context parallelism");
  }
  if (p.pp > 1) {
    c.stated("/parallel/pp",
             fmt::format("DeepSpeed takes the pipeline from code: PipelineModule(layers=..., "
                         "num_stages={}) with {} layers per stage "
                         "(partition_method=\"uniform\")",
                         p.pp, s.stage_layer_count(0)));
  }
  cover_stage_layers(s, c, Target::kDeepSpeed);
  if (uneven_stages(s)) {
    // PipelineModule's partition_method balances layer counts ("uniform"), parameters or layers
    // of a type (runtime/pipe/module.py _partition_layers): no list of per-stage counts.
    stage_layers_refused(s, c,
                         "megatron (--decoder-first/last-pipeline-num-layers), torchtitan "
                         "(pipeline_parallel_first/last_stage_less_layers) where they give "
                         "these counts",
                         "PipelineModule(partition_method=\"uniform\")");
  } else {
    stage_layers_mapped(s, c, "");
  }
  map_schedule(s, c);
  cover_post_validation(s, c);
  cover_paci_mode(s, c);
  Json zero{{"stage", p.zero_stage}};
  map_reduction(s, c, zero);
  cover_megatron_ddp_elsewhere(s, c, "DeepSpeed's own buckets (reduce_bucket_size)");
  map_zero3_gathering(s, c, zero);
  map_offload_deepspeed(s, c, zero);
  j["zero_optimization"] = zero;
  c.mapped("/parallel/zero_stage", "zero_optimization.stage");
  cover_fsdp2_elsewhere(s, c, "ZeRO stage 3");
  if (p.pp > 1 && p.zero_stage >= 2) {
    c.cannot("/parallel/zero_stage",
             fmt::format("ZeRO stage {} with pipeline parallelism", p.zero_stage),
             "megatron (Megatron FSDP)", "ZeRO stage 1");
    j["zero_optimization"]["stage"] = 1;
  }
}

void map_training(const Scenario& s, ExportContext& c, Json& j) {
  const auto& t = s.training;
  if (s.parallel.tp > 1) {
    // AutoTP: DeepSpeedConfig's batch check (runtime/config.py _batch_assertion: train_batch ==
    // micro x accumulation x world_size) counts the data-parallel ranks with an mpu but every
    // rank without one (world_size = dist.get_world_size(), L456-471), and DeepSpeed supports
    // both launches. Left out, train_batch_size is derived from the other two, which hold
    // either way.
    c.mapped("/training/global_batch",
             "train_micro_batch_size_per_gpu x gradient_accumulation_steps x the data-parallel "
             "ranks (train_batch_size left for DeepSpeed to derive)");
    c.note(fmt::format(
        "train_batch_size is not written: with AutoTP (tensor_parallel.autotp_size {}) DeepSpeed "
        "derives it as micro x accumulation x its world size, the data-parallel size {} when the "
        "launcher passes an mpu, every rank ({}) without one; either way each step trains {} "
        "sequences",
        s.parallel.tp, s.parallel.dp, s.cluster.total_gpus(), t.global_batch));
  } else {
    j["train_batch_size"] = t.global_batch;
    c.mapped("/training/global_batch", "train_batch_size");
  }
  j["train_micro_batch_size_per_gpu"] = t.micro_batch;
  j["gradient_accumulation_steps"] = accumulation_steps(s);
  c.mapped("/training/micro_batch", "train_micro_batch_size_per_gpu, gradient_accumulation_steps");
  if (t.precision == cost::Dtype::kBf16) j["bf16"] = Json{{"enabled", true}};
  if (t.precision == cost::Dtype::kFp16) j["fp16"] = Json{{"enabled", true}};
  if (t.fp8.enabled()) {
    refuse_fp8(s, c,
               "DeepSpeed 0.19.8's config has no FP8 training: FP8 runs through Transformer "
               "Engine in the model's code (te.Linear under te.fp8_autocast), which no ds_config "
               "key turns on");
  } else {
    covered_without_fp8(s, c);
    c.mapped("/training/precision",
             t.precision == cost::Dtype::kFp32 ? "fp32 (no section)" : "bf16/fp16.enabled");
  }
  if (t.precision == cost::Dtype::kFp32) {
    c.unused("/training/grad_precision", "fp32 training");
  } else if (t.fp32_gradients && s.parallel.zero_stage == 0) {
    // DeepSpeed 0.19.8 builds no optimizer for a model dtype with another gradient dtype without
    // ZeRO: engine.py _do_optimizer_sanity_check raises NotImplementedError("unsupported mix of
    // model_dtype=... and grad_accum_dtype=...") past the ZeRO branch (L2312-2323); ZeRO 1-3
    // accumulate in fp32 (BF16_Optimizer at stage 1, the ZeRO optimizers above).
    const std::string dtype = cost::dtype_name(t.precision);
    j["data_types"] = Json{{"grad_accum_dtype", dtype}};
    j["communication_data_type"] = dtype;
    c.cannot("/training/grad_precision",
             fmt::format("fp32 gradient accumulation of {} training without ZeRO (DeepSpeed "
                         "0.19.8's engine raises NotImplementedError for that mix)",
                         dtype),
             "deepspeed with ZeRO 1-3, megatron (--accumulate-allreduce-grads-in-fp32), "
             "torchtitan",
             fmt::format("{} gradients (data_types.grad_accum_dtype {})", dtype, dtype));
  } else {
    const std::string dtype = t.fp32_gradients ? "fp32" : cost::dtype_name(t.precision);
    j["data_types"] = Json{{"grad_accum_dtype", dtype}};
    j["communication_data_type"] = dtype;
    c.mapped("/training/grad_precision", "data_types.grad_accum_dtype, communication_data_type");
  }
  switch (t.recompute) {
    case cost::Recompute::kNone:
      c.mapped("/training/recompute", "none");
      break;
    case cost::Recompute::kSelective:
      c.cannot("/training/recompute",
               "selective recompute of the attention core (Korthikanti et al.)",
               "megatron (--recompute-granularity selective)", "no recompute");
      break;
    case cost::Recompute::kPerOp:
      // DeepSpeed's activation_checkpointing section configures deepspeed.checkpointing's
      // whole-function checkpoints (activation_checkpointing/config.py): no per-op policy.
      c.cannot("/training/recompute",
               "torchtitan's per-op selective activation checkpointing (DeepSpeed checkpoints "
               "whole functions)",
               "torchtitan (activation_checkpoint selective, op)", "no recompute");
      break;
    case cost::Recompute::kFull:
      j["activation_checkpointing"] =
          Json{{"partition_activations", false}, {"contiguous_memory_optimization", false}};
      c.stated("/training/recompute",
               "full recompute: checkpoint every layer in the model code "
               "(deepspeed.checkpointing.checkpoint, or PipelineModule("
               "activation_checkpoint_interval=1)); the activation_checkpointing section "
               "configures it");
      break;
  }
  map_recompute_groups(s, c, "every layer checkpointed in the model code",
                       "the checkpoints are the model code's, no configuration key sets them");
  if (t.recompute == cost::Recompute::kSelective) {
    c.part_of_refused("/training/recompute_modules",
                      "Megatron's modules, with \"selective\" (refused at /training/recompute)");
  } else {
    c.unused("/training/recompute_modules", "read with \"recompute\": \"selective\" only");
  }
  c.stated("/training/attention",
           fmt::format("DeepSpeed takes the attention from the model code: {}",
                       t.attention == strat::AttentionKind::kFlash
                           ? "FlashAttention"
                           : "unfused attention (scores in memory)"));
}

void map_model(const Scenario& s, ExportContext& c) {
  const auto& m = s.model;
  c.stated("/model/layers",
           fmt::format("DeepSpeed takes the model from code: {} layers, hidden {}, ffn {}, {} "
                       "heads ({} kv heads), vocabulary {}, sequence {}, {}, {}, {} embeddings, "
                       "{}, {}, {} positions",
                       m.layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.vocab, m.seq_len,
                       m.mlp == strat::MlpKind::kSwiglu ? "SwiGLU" : "GELU",
                       m.norm == strat::NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm",
                       m.tied_embeddings ? "tied" : "untied", m.dropout ? "dropout" : "no dropout",
                       m.linear_bias ? "linear biases"
                       : m.qkv_bias  ? "QKV biases only"
                                     : "no linear biases",
                       m.learned_positions ? "learned" : "rotary"));
  for (const char* path :
       {"/model/hidden", "/model/heads", "/model/kv_heads", "/model/ffn_hidden", "/model/vocab",
        "/model/seq_len", "/model/mlp", "/model/norm", "/model/tied_embeddings", "/model/dropout",
        "/model/linear_bias", "/model/qkv_bias", "/model/learned_positions"}) {
    c.mapped(path, "stated with /model/layers (the model is code)");
  }
}

void map_optimizer(const Scenario& s, ExportContext& c, Json& j) {
  j["optimizer"] = Json{{"type", "AdamW"}};
  if (s.optimizer.kind == strat::OptimizerKind::kAdamW) {
    c.mapped("/optimizer/name", "optimizer.type AdamW");
  } else {
    c.cannot("/optimizer/name",
             fmt::format("the {} optimizer in DeepSpeed's JSON",
                         strat::optimizer_name(s.optimizer.kind)),
             "shampoo (--to shampoo writes its constructor; pass the optimizer to "
             "deepspeed.initialize in code)",
             "optimizer.type AdamW");
  }
  cover_shampoo_fields(s, c, "part of the optimizer refused at /optimizer/name");
  c.note(
      "the scenario has no learning rate or AdamW hyper-parameters: optimizer.params is "
      "left to DeepSpeed's defaults; add lr, betas, eps, weight_decay yourself");
}

}  // namespace

Rendered write_deepspeed(const Scenario& s, const ExportOptions& o, ExportContext& c) {
  Json j;
  cover_not_trainer(s, c);
  cover_launcher(s, c, "deepspeed");
  cover_framework(s, c, Target::kDeepSpeed);
  cover_placements(s, c);
  cover_experts_elsewhere(s, c,
                          "DeepSpeed takes the model from code (experts: deepspeed.moe.layer.MoE), "
                          "not from its config; Megatron-LM (--to megatron)");
  map_training(s, c, j);
  map_parallel(s, c, j);
  map_model(s, c);
  map_optimizer(s, c, j);
  // Plain JSON always: DeepSpeed reads hjson, but HF Trainer and Accelerate json.load the same
  // file. The header rides in "_parasim", a key DeepSpeedConfig ignores.
  (void)o;
  return {j.dump(2) + "\n", "", false, "_parasim"};
}

}  // namespace parasim::exporter
