#include "planner/export/megatron_export.hpp"

#include <fmt/format.h>

#include "planner/export/export_common.hpp"
#include "planner/export/fp8_export.hpp"
#include "planner/export/megatron_experts.hpp"
#include "planner/export/offload_export.hpp"
#include "planner/export/tp_overlap_export.hpp"

namespace parasim::exporter {
namespace {

using strat::PipelineSchedule;
using strat::Scenario;

std::string num(long long v) {
  return std::to_string(v);
}

// The seam of the pipeline schedule: every schedule parasim knows maps or is refused here; a
// schedule added to the scenario without a case fails loudly (tests/planner).
void map_schedule(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& p = s.parallel;
  if (p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/microbatch_group", "read with interleaved-1f1b only");
  }
  if (p.schedule == PipelineSchedule::kDualPipeV && p.pp > 1) {
    c.part_of_refused("/parallel/overlap_forward_backward", "dualpipev's (see /parallel/schedule)");
  } else {
    c.unused("/parallel/overlap_forward_backward", "read with dualpipev only");
  }
  if (p.pp == 1 && p.schedule != PipelineSchedule::kInterleaved) {
    c.unused("/parallel/schedule", "no pipeline (pp 1)");
    c.unused("/parallel/chunks", "no pipeline (pp 1)");
    return;
  }
  switch (p.schedule) {
    case PipelineSchedule::kOneFOneB:
      c.mapped("/parallel/schedule", "1F1B: Megatron-LM's schedule without interleaving");
      c.unused("/parallel/chunks", "one model chunk per stage");
      return;
    case PipelineSchedule::kInterleaved:
      // 0.19.2 has no --virtual-pipeline-model-parallel-size (the field is excluded from the
      // flags, arguments.py _add_network_size_args); layers per virtual stage set the chunks.
      a.add("--num-layers-per-virtual-pipeline-stage", num(s.virtual_stage_layers(0)));
      c.mapped("/parallel/schedule", "interleaved 1F1B (virtual pipeline)");
      c.mapped("/parallel/chunks", "--num-layers-per-virtual-pipeline-stage");
      if (p.microbatch_group > 0) {
        a.add("--microbatch-group-size-per-virtual-pipeline-stage", num(p.microbatch_group));
        c.mapped("/parallel/microbatch_group",
                 "--microbatch-group-size-per-virtual-pipeline-stage");
      } else {
        c.unused("/parallel/microbatch_group", "Megatron's default group, pp micro-batches");
      }
      return;
    case PipelineSchedule::kGpipe:
      c.cannot("/parallel/schedule", "the gpipe schedule (all forwards, then all backwards)",
               "torchtitan (GPipe)", "1F1B");
      c.unused("/parallel/chunks", "one model chunk per stage");
      return;
    case PipelineSchedule::kZbH1:
    case PipelineSchedule::kZbH2:
      c.cannot(
          "/parallel/schedule",
          fmt::format("the zero-bubble schedule {} (B/W split)", strat::schedule_name(p.schedule)),
          "no export target (megatron-core 0.19.2 has no zero-bubble schedule; torchtitan's "
          "InterleavedZeroBubble and ZBVZeroBubble are other schedules)",
          "1F1B");
      c.unused("/parallel/chunks", "one model chunk per stage");
      return;
    case PipelineSchedule::kZb1p:
    case PipelineSchedule::kZb2p:
      refuse_searched_zero_bubble(s, c, "1F1B");
      c.unused("/parallel/chunks", "one model chunk per stage");
      return;
    case PipelineSchedule::kInterleavedZb:
    case PipelineSchedule::kZbV:
    case PipelineSchedule::kDualPipeV:
      c.cannot("/parallel/schedule",
               fmt::format("the {} schedule (B/W split over several chunks per stage)",
                           strat::schedule_name(p.schedule)),
               fmt::format("torchtitan ({}); megatron-core 0.19.2 has none (its "
                           "--overlap-moe-expert-parallel-comm pairs a forward with a backward "
                           "inside interleaved 1F1B; ZB-V is in the Zero Bubble authors' fork, "
                           "sail-sg/zero-bubble-pipeline-parallelism)",
                           p.schedule == PipelineSchedule::kInterleavedZb ? "InterleavedZeroBubble"
                           : p.schedule == PipelineSchedule::kZbV         ? "ZBVZeroBubble"
                                                                          : "DualPipeV"),
               "1F1B");
      c.part_of_refused("/parallel/chunks", "the schedule's chunks");
      return;
    case PipelineSchedule::kPipeDream:
    case PipelineSchedule::kPipeDream2BW:
    case PipelineSchedule::kPaci:
      c.cannot("/parallel/schedule",
               fmt::format("the asynchronous {} schedule (stage-local optimizer steps)",
                           strat::schedule_name(p.schedule)),
               "no export target (the papers' own code)", "1F1B (synchronous)");
      c.unused("/parallel/chunks", "one model chunk per stage");
      return;
  }
  throw std::logic_error(std::string("megatron export: no mapping for the schedule ") +
                         strat::schedule_name(p.schedule));
}

// Uneven stages: megatron-core 0.19.2's --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers give the first and the last stage their own layer counts,
// the other layers split evenly over the stages between (arguments.py validate_args; with one
// model chunk per stage). Any other split is refused.
void map_stage_layers(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& p = s.parallel;
  if (!uneven_stages(s)) {
    stage_layers_mapped(s, c, "");
    return;
  }
  const int last = p.pp - 1;
  bool middle_even = true;
  for (int st = 2; st < last; ++st) {
    middle_even = middle_even && s.virtual_stage_layers(st) == s.virtual_stage_layers(1);
  }
  if (p.chunks != 1 || !middle_even) {
    stage_layers_refused(
        s, c,
        "megatron (--decoder-first/last-pipeline-num-layers: the first and the last stage only, "
        "one model chunk per stage), torchtitan (pipeline_parallel_first/last_stage_less_layers) "
        "where its split gives these counts",
        "even stages");
    return;
  }
  // The even share of the stages between the first and the last (pp 2: none; the last
  // stage then takes what the first leaves).
  const int middle = p.pp > 2 ? s.virtual_stage_layers(1) : -1;
  std::string key;
  if (s.virtual_stage_layers(0) != middle) {
    a.add("--decoder-first-pipeline-num-layers", num(s.virtual_stage_layers(0)));
    key = "--decoder-first-pipeline-num-layers";
  }
  if (p.pp > 2 && s.virtual_stage_layers(last) != middle) {
    a.add("--decoder-last-pipeline-num-layers", num(s.virtual_stage_layers(last)));
    if (!key.empty()) key += " ";
    key += "--decoder-last-pipeline-num-layers";
  }
  stage_layers_mapped(s, c, key);
}

// The data-parallel reduction. megatron-core 0.19.2 reduces in buckets only with
// --overlap-grad-reduce (each bucket as its gradients are ready); without it the bucket size is
// None: one bucket per gradient buffer after the backward (distributed_data_parallel.py, "Set
// bucket_size to infinity if overlap_grad_reduce is False").
// parallel.dp_bucket_layout "megatron" (megatron_buckets.hpp): Megatron's own buckets, exactly.
// --overlap-grad-reduce with gradient_reduction "overlapped", --ddp-bucket-size when dp_bucket
// is given (0: Megatron's default, max(40M, 1M x dp)); --overlap-param-gather with
// overlap_param_gather.
void map_megatron_ddp(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& p = s.parallel;
  c.mapped("/parallel/dp_bucket_layout", "megatron-core's DDP buffers");
  if (s.training.framework.gradient_reduction == strat::GradientReduction::kOverlapped) {
    a.add("--overlap-grad-reduce");
    if (p.dp_bucket.value > 0) {
      a.add("--ddp-bucket-size", num(bucket_elements(s)));
      c.mapped("/parallel/dp_bucket", "--ddp-bucket-size (elements)");
    } else {
      c.mapped("/parallel/dp_bucket", "Megatron's default bucket, max(40M, 1M x dp) elements");
    }
    cover_framework_reduction(s, c, "--overlap-grad-reduce (each bucket as it is ready)");
  } else {
    c.unused("/parallel/dp_bucket", "one bucket after the backward without --overlap-grad-reduce");
    cover_framework_reduction(s, c, "one bucket after the backward (no --overlap-grad-reduce)");
  }
  if (p.overlap_param_gather) {
    a.add("--overlap-param-gather");
    c.mapped("/parallel/overlap_param_gather", "--overlap-param-gather");
  } else {
    c.unused("/parallel/overlap_param_gather", "off");
  }
}

void map_reduction(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& p = s.parallel;
  cover_cuda_graphs_eager_target(s, c);
  if (s.replicas() == 1) {
    c.unused("/parallel/dp_bucket", "no data-parallel replicas");
    c.unused("/parallel/dp_bucket_layout", "no data-parallel replicas");
    c.unused("/parallel/overlap_param_gather", "no data-parallel replicas");
    cover_framework_reduction(s, c, "");
    return;
  }
  if (p.dp_bucket_layout == strat::DpBucketLayout::kMegatron) {
    map_megatron_ddp(s, c, a);
    return;
  }
  // Whole-layer buckets: Megatron's own are per parameter tensor and on the first stage only
  // (dp_bucket_layout "megatron" models them).
  c.mapped("/parallel/dp_bucket_layout", "whole layers (see /parallel/dp_bucket)");
  c.unused("/parallel/overlap_param_gather", "off");
  const bool overlapped =
      s.training.framework.gradient_reduction == strat::GradientReduction::kOverlapped;
  if (p.dp_bucket.value <= 0) {
    // One bucket: it can only go once the backward has produced its last gradient, whichever
    // the policy.
    c.mapped("/parallel/dp_bucket",
             "one bucket after the backward (no --overlap-grad-reduce: Megatron-LM's default)");
    cover_framework_reduction(s, c, "one bucket after the backward (see /parallel/dp_bucket)");
    return;
  }
  a.add("--overlap-grad-reduce");
  a.add("--ddp-bucket-size", num(bucket_elements(s)));
  c.mapped("/parallel/dp_bucket", "--overlap-grad-reduce --ddp-bucket-size (elements)");
  if (overlapped) {
    cover_framework_reduction(s, c, "--overlap-grad-reduce (each bucket as it is ready)");
  } else {
    c.cannot("/training/framework/gradient_reduction",
             fmt::format("the data-parallel reduction after the backward in buckets of {} "
                         "gradients (Megatron-LM buckets only with --overlap-grad-reduce)",
                         bucket_elements(s)),
             "deepspeed (ZeRO-0: its engine's buckets of 5e8 gradients after the backward)",
             "--overlap-grad-reduce (each bucket as soon as it is ready)");
    c.part_of_refused("/training/framework/gradient_bucket",
                      "part of /training/framework/gradient_reduction");
    c.part_of_refused("/training/framework/gradient_bucket_elements",
                      "part of /training/framework/gradient_reduction");
  }
}

void map_parallel(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& p = s.parallel;
  a.add("--tensor-model-parallel-size", num(p.tp));
  c.mapped("/parallel/tp", "--tensor-model-parallel-size");
  a.add("--pipeline-model-parallel-size", num(p.pp));
  cover_stage_layers(s, c, Target::kMegatron);
  map_stage_layers(s, c, a);
  a.add("--context-parallel-size", num(p.cp));
  c.mapped("/parallel/cp", "--context-parallel-size");
  if (p.cp > 1) {
    // Megatron-core's names (megatron/core/model_parallel_config.py, cp_comm_type).
    const char* comm[] = {"p2p", "all_gather", "a2a", "a2a+p2p"};
    a.add("--cp-comm-type", comm[static_cast<int>(p.cp_comm)]);
    c.mapped("/parallel/cp_variant", "--cp-comm-type");
  } else {
    c.unused("/parallel/cp_variant", "no context parallelism");
  }
  if (p.cp > 1 && p.cp_comm == strat::CpComm::kAllToAllP2p) {
    // A list (nargs '+'): [a2a group, p2p group], level 0 innermost (parallel_state.py
    // create_hierarchical_groups); its second size as a word of its own.
    a.add("--hierarchical-context-parallel-sizes", num(p.cp_a2a_size));
    a.add(num(p.cp / p.cp_a2a_size));
    c.mapped("/parallel/cp_a2a_size", "--hierarchical-context-parallel-sizes");
  } else {
    c.unused("/parallel/cp_a2a_size", "no a2a+p2p context parallelism");
  }
  c.stated("/parallel/dp",
           fmt::format("Megatron-LM derives dp = WORLD_SIZE / (tp x pp x cp) = {} / ({} x {} x {}) "
                       "= {}",
                       s.cluster.total_gpus(), p.tp, p.pp, p.cp, p.dp));
  if (p.sequence_parallel) a.add("--sequence-parallel");
  c.mapped("/parallel/sequence_parallel", p.sequence_parallel ? "--sequence-parallel" : "off");
  map_tp_overlap_megatron(s, c, a);
  map_schedule(s, c, a);
  cover_post_validation(s, c);
  cover_paci_mode(s, c);
  // ZeRO: 1 is the distributed optimizer (gradients reduce-scattered, parameters all-gathered
  // after the step, as parasim simulates it); 2 and 3 are Megatron FSDP's sharding strategies.
  switch (p.zero_stage) {
    case 0:
      c.mapped("/parallel/zero_stage", "no sharding (DDP)");
      break;
    case 1:
      a.add("--use-distributed-optimizer");
      c.mapped("/parallel/zero_stage", "--use-distributed-optimizer");
      break;
    default:
      a.add("--use-megatron-fsdp");
      a.add("--data-parallel-sharding-strategy",
            p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
      // validate_args: "Megatron-FSDP requires the `fsdp_dtensor` checkpointing format".
      a.add("--ckpt-format", "fsdp_dtensor");
      c.mapped("/parallel/zero_stage", "--use-megatron-fsdp --data-parallel-sharding-strategy");
  }
  // Megatron's --use-torch-fsdp2 wraps its bf16 modules without a mixed-precision policy (bf16
  // shards and reductions, the output layer a unit of its own) and refuses pipelining
  // (megatron/core/distributed/torch_fully_sharded_data_parallel.py, arguments.py @0.19.2).
  cover_fsdp2_elsewhere(s, c, "Megatron FSDP, optim_grads_params");
  map_reduction(s, c, a);
  map_offload_megatron(s, c, a);
}

void map_training(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& t = s.training;
  a.add("--micro-batch-size", num(t.micro_batch));
  c.mapped("/training/micro_batch", "--micro-batch-size");
  a.add("--global-batch-size", num(t.global_batch));
  c.mapped("/training/global_batch", "--global-batch-size");
  switch (t.precision) {
    case cost::Dtype::kBf16:
      a.add("--bf16");
      break;
    case cost::Dtype::kFp16:
      a.add("--fp16");
      break;
    default:
      break;
  }
  // FP8 keeps --bf16: the activations, the attention and the head stay bf16, the linears'
  // GEMMs run in FP8 (the --fp8-* flags).
  c.mapped("/training/precision",
           t.fp8.enabled() ? "--bf16 with the linears in FP8 (--fp8-format, --fp8-recipe)"
           : t.precision == cost::Dtype::kFp32
               ? "fp32 (no flag)"
               : (t.precision == cost::Dtype::kBf16 ? "--bf16" : "--fp16"));
  map_megatron_fp8(s, c, a);
  if (t.precision == cost::Dtype::kFp32) {
    c.unused("/training/grad_precision", "fp32 training");
  } else if (t.fp32_gradients) {
    a.add("--accumulate-allreduce-grads-in-fp32");
    c.mapped("/training/grad_precision", "--accumulate-allreduce-grads-in-fp32");
  } else if (t.precision == cost::Dtype::kBf16) {
    // With --bf16 Megatron-LM accumulates and reduces in fp32 unless told otherwise
    // (arguments.py validate_args: bf16 sets accumulate_allreduce_grads_in_fp32).
    a.add("--grad-reduce-in-bf16");
    c.mapped("/training/grad_precision", "--grad-reduce-in-bf16");
  } else {
    c.mapped("/training/grad_precision", "fp16 gradients (Megatron-LM's default with --fp16)");
  }
  switch (t.recompute) {
    case cost::Recompute::kNone:
      c.mapped("/training/recompute", "none (no flag)");
      break;
    case cost::Recompute::kSelective: {
      // The modules (default the attention core, Korthikanti et al.'s selective): nargs='*'.
      const cost::RecomputeModules& m = t.recompute_modules;
      std::vector<std::string> names;
      if (m.core_attn) names.emplace_back("core_attn");
      if (m.mlp) names.emplace_back("mlp");
      if (m.layernorm) names.emplace_back("layernorm");
      if (m.moe) names.emplace_back("moe");
      if (m.moe_act) names.emplace_back("moe_act");
      if (m.shared_experts) names.emplace_back("shared_experts");
      if (m.mla_up_proj) names.emplace_back("mla_up_proj");
      a.add("--recompute-granularity", "selective");
      if (names.empty()) a.add("--recompute-modules");
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (i == 0)
          a.add("--recompute-modules", names[i]);
        else
          a.add(names[i]);  // the list's next word
      }
      c.mapped("/training/recompute", "--recompute-granularity selective --recompute-modules");
      c.mapped("/training/recompute_modules", "--recompute-modules");
      if (m.layernorm) {
        // megatron-core 0.19.2's default Transformer Engine layers fuse the norms into
        // linear_qkv / linear_fc1 (gpt_layer_specs.py: input_layernorm and pre_mlp_layernorm are
        // IdentityOp), so transformer_layer.py never sets recompute_input_layernorm there: the
        // module saves nothing in the run this export starts.
        c.cannot("/training/recompute_modules",
                 "recomputing the layer norms (Transformer Engine's layers, Megatron-core's "
                 "default, fuse them into the next linear: the layernorm module saves nothing "
                 "there)",
                 "no export target as simulated", "--recompute-modules with layernorm, a no-op");
      }
      break;
    }
    case cost::Recompute::kPerOp:
      c.cannot("/training/recompute",
               "torchtitan's per-op selective activation checkpointing (Megatron checkpoints by "
               "module, not by op)",
               "torchtitan (activation_checkpoint selective, op)", "no recompute flag");
      break;
    case cost::Recompute::kFull: {
      // The scenario's method and group size (default uniform 1: every layer from its input).
      const bool block = t.recompute_method == cost::RecomputeMethod::kBlock;
      // every-nth 1 checkpoints every layer: uniform 1.
      const bool every_nth =
          t.recompute_method == cost::RecomputeMethod::kEveryNth && t.recompute_num_layers > 1;
      a.add("--recompute-granularity", "full");
      a.add("--recompute-method", block ? "block" : "uniform");
      a.add("--recompute-num-layers", t.recompute_method == cost::RecomputeMethod::kEveryNth
                                          ? "1"
                                          : std::to_string(t.recompute_num_layers));
      c.mapped("/training/recompute", "--recompute-granularity full");
      if (every_nth) {
        c.cannot("/training/recompute_method",
                 "torchtitan 0.2.2's every-N-th block checkpointed (Megatron's methods checkpoint "
                 "groups from a stage's first layer, or its first layers)",
                 "torchtitan 0.2 (activation_checkpoint selective_ac_option N)",
                 "--recompute-method uniform --recompute-num-layers 1 (every layer)");
        c.part_of_refused("/training/recompute_num_layers",
                          "every-nth's N (refused at /training/recompute_method)");
      } else {
        c.mapped("/training/recompute_method", "--recompute-method");
        c.mapped("/training/recompute_num_layers", "--recompute-num-layers");
      }
      break;
    }
  }
  if (t.recompute != cost::Recompute::kFull) {
    c.unused("/training/recompute_method", "read with \"recompute\": \"full\" only");
    c.unused("/training/recompute_num_layers", "read with \"recompute\": \"full\" only");
  }
  if (t.recompute != cost::Recompute::kSelective) {
    c.unused("/training/recompute_modules", "read with \"recompute\": \"selective\" only");
  }
  a.add("--attention-backend", t.attention == strat::AttentionKind::kFlash ? "flash" : "unfused");
  c.mapped("/training/attention", "--attention-backend");
}

void map_model(const Scenario& s, ExportContext& c, ArgList& a) {
  const auto& m = s.model;
  a.add("--num-layers", num(m.layers));
  c.mapped("/model/layers", "--num-layers");
  a.add("--hidden-size", num(m.hidden));
  c.mapped("/model/hidden", "--hidden-size");
  a.add("--ffn-hidden-size", num(m.ffn_hidden));
  c.mapped("/model/ffn_hidden", "--ffn-hidden-size");
  a.add("--num-attention-heads", num(m.heads));
  c.mapped("/model/heads", "--num-attention-heads");
  if (m.kv_heads != m.heads) {
    a.add("--group-query-attention");
    a.add("--num-query-groups", num(m.kv_heads));
  }
  c.mapped("/model/kv_heads", m.kv_heads != m.heads ? "--group-query-attention --num-query-groups"
                                                    : "multi-head attention (no flag)");
  a.add("--seq-length", num(m.seq_len));
  a.add("--max-position-embeddings", num(m.seq_len));
  c.mapped("/model/seq_len", "--seq-length --max-position-embeddings");
  // Megatron-LM's vocabulary must split evenly over tp; --padded-vocab-size sets the model's
  // rows (TokenizerConfig.padded_vocab_size, training_config.py).
  const long long padded =
      (static_cast<long long>(m.vocab) + s.parallel.tp - 1) / s.parallel.tp * s.parallel.tp;
  a.add("--padded-vocab-size", num(padded));
  c.mapped("/model/vocab", "--padded-vocab-size");
  if (padded != m.vocab) {
    c.note(
        fmt::format("the vocabulary ({}) is padded to {} rows, a multiple of tp ({}), as "
                    "Megatron-LM's embedding needs; the padding rows are never selected",
                    m.vocab, padded, s.parallel.tp));
  }
  if (m.mlp == strat::MlpKind::kSwiglu) a.add("--swiglu");
  c.mapped("/model/mlp", m.mlp == strat::MlpKind::kSwiglu ? "--swiglu" : "gelu (no flag)");
  a.add("--normalization", m.norm == strat::NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  c.mapped("/model/norm", "--normalization");
  if (!m.tied_embeddings) a.add("--untie-embeddings-and-output-weights");
  c.mapped("/model/tied_embeddings",
           m.tied_embeddings ? "tied (no flag)" : "--untie-embeddings-and-output-weights");
  if (!m.dropout) {
    a.add("--attention-dropout", "0.0");
    a.add("--hidden-dropout", "0.0");
  }
  c.mapped("/model/dropout", m.dropout ? "Megatron-LM's default rates (0.1)"
                                       : "--attention-dropout 0.0 --hidden-dropout 0.0");
  if (!m.linear_bias) a.add("--disable-bias-linear");
  c.mapped("/model/linear_bias", m.linear_bias ? "biases (no flag)" : "--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.add("--add-qkv-bias");
  c.mapped("/model/qkv_bias",
           m.qkv_bias && !m.linear_bias ? "--add-qkv-bias" : "with /model/linear_bias");
  a.add("--position-embedding-type", m.learned_positions ? "learned_absolute" : "rope");
  c.mapped("/model/learned_positions", "--position-embedding-type");
}

void map_optimizer(const Scenario& s, ExportContext& c, ArgList& a) {
  // Megatron-LM's "adam" is AdamW: OptimizerConfig.decoupled_weight_decay defaults to True
  // (core/optimizer/optimizer_config.py).
  a.add("--optimizer", "adam");
  if (s.optimizer.kind == strat::OptimizerKind::kAdamW) {
    c.mapped("/optimizer/name", "--optimizer adam (AdamW)");
  } else {
    c.cannot("/optimizer/name",
             fmt::format("the {} optimizer", strat::optimizer_name(s.optimizer.kind)),
             "shampoo (--to shampoo writes its constructor)", "--optimizer adam (AdamW)");
  }
  cover_shampoo_fields(s, c, "part of the optimizer refused at /optimizer/name");
  c.note(
      "the scenario has no learning rate or AdamW hyper-parameters: Megatron-LM's defaults "
      "apply (--adam-beta1 0.9, --adam-beta2 0.999, --adam-eps 1e-8, --weight-decay 0.01, "
      "--clip-grad 1.0); add --lr, the schedule, data and tokenizer arguments yourself");
}

}  // namespace

Rendered write_megatron(const Scenario& s, const ExportOptions& o, ExportContext& c) {
  ArgList a;
  cover_not_trainer(s, c);
  cover_launcher(s, c, "torchrun");
  cover_framework(s, c, Target::kMegatron);
  cover_placements(s, c);
  map_parallel(s, c, a);
  map_training(s, c, a);
  map_model(s, c, a);
  map_megatron_attention_extras(s, c, a);
  map_megatron_experts(s, c, a);
  map_optimizer(s, c, a);
  if ((s.parallel.tp > 1 || s.parallel.cp > 1) && s.parallel.zero_stage < 2) {
    // validate_args (arguments.py) asserts it before Blackwell (device arch < 10); Megatron
    // FSDP asserts the opposite (CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset).
    c.note(
        "set CUDA_DEVICE_MAX_CONNECTIONS=1 in the environment (Megatron-LM requires it with "
        "tensor or context parallelism on GPUs before Blackwell)");
  }
  c.note(
      fmt::format("run: WORLD_SIZE={} processes of pretrain_gpt.py with these arguments, "
                  "e.g. torchrun ... pretrain_gpt.py $(cat FILE)",
                  s.cluster.total_gpus()));
  if (o.json) return {a.json_list(), "", false, ""};
  return {a.lines(), "# ", false, ""};
}

}  // namespace parasim::exporter
