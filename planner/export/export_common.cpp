#include "planner/export/export_common.hpp"
#include "planner/export/offload_export.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace parasim::exporter {

std::string ArgList::lines() const {
  std::string out;
  for (const auto& [flag, value] : args_) out += flag + (value ? " " + *value : "") + "\n";
  return out;
}

std::string ArgList::json_list() const {
  nlohmann::json words = nlohmann::json::array();
  for (const auto& [flag, value] : args_) {
    words.push_back(flag);
    if (value) words.push_back(*value);
  }
  return words.dump(2) + "\n";
}

void cover_not_trainer(const strat::Scenario& s, ExportContext& c) {
  c.not_trainer("/name", "metadata");
  c.not_trainer("/description", "metadata");
  c.not_trainer("/$schema", "metadata");
  c.not_trainer("/search", "the planner's search space (docs/planner.md); a plan's scenario is one "
                           "point of it");
  c.not_trainer("/model/preset", "resolved into the model's fields");
  c.not_trainer("/model/name", "metadata");
  c.not_trainer("/cluster/preset", "resolved into the cluster's fields");
  c.not_trainer("/cluster/name", "metadata");
  const std::string hardware = "hardware that parasim costs; no trainer setting";
  c.not_trainer("/cluster/device", hardware);
  c.not_trainer("/cluster/intra_node", hardware);
  c.not_trainer("/cluster/inter_node", hardware);
  c.not_trainer("/cluster/rails_only", hardware);
  c.not_trainer("/cluster/network", hardware);
  cover_host_system(c);
  c.not_trainer("/optimizer/host_op_overhead",
                "cost model: host time the optimizer's eager loop spends per op");
  (void)s;
}

std::string world_text(const strat::Scenario& s) {
  const auto& c = s.cluster;
  if (c.host_gpus() != c.gpus_per_node) {
    return fmt::format("{} GPUs ({} host{} x {} GPUs; NVLink domains of {})", c.total_gpus(),
                       c.hosts(), c.hosts() == 1 ? "" : "s", c.host_gpus(), c.gpus_per_node);
  }
  return fmt::format("{} GPUs ({} node{} x {} GPUs per node)", c.total_gpus(), c.nodes,
                     c.nodes == 1 ? "" : "s", c.gpus_per_node);
}

void cover_launcher(const strat::Scenario& s, ExportContext& c, const std::string& launcher) {
  const std::string command = launcher == "deepspeed"
                                  ? fmt::format("deepspeed --num_nodes {} --num_gpus {}",
                                                s.cluster.hosts(), s.cluster.host_gpus())
                                  : fmt::format("torchrun --nnodes {} --nproc-per-node {}",
                                                s.cluster.hosts(), s.cluster.host_gpus());
  // The caching allocator's mode is the launch environment's (PYTORCH_CUDA_ALLOC_CONF).
  const bool expandable =
      s.training.allocator_kind() == strat::AllocatorKind::kExpandableSegments;
  const std::string env = expandable ? "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " : "";
  const std::string note = fmt::format("launch on {}: {}{} ...", world_text(s), env, command);
  c.stated("/cluster/nodes", note);
  c.stated("/training/allocator",
           expandable ? "PyTorch's allocator with expandable segments: the launch environment "
                        "sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (see /cluster/nodes)"
                      : "PyTorch's default caching allocator: the launch environment leaves "
                        "PYTORCH_CUDA_ALLOC_CONF unset");
  c.mapped("/cluster/gpus_per_node", "the launcher's processes per node (see /cluster/nodes)");
  c.mapped("/cluster/gpus_per_host", "the launcher's processes per host (see /cluster/nodes)");
}

void cover_experts_elsewhere(const strat::Scenario& s, ExportContext& c, const std::string& why) {
  const auto& m = s.model;
  if (m.moe.enabled()) {
    c.cannot("/model/moe", "a mixture of experts", why, "the dense model of the same attention");
    for (const char* path : {"/parallel/ep", "/parallel/etp", "/parallel/moe_dispatcher",
                             "/parallel/moe_shared_expert_overlap"}) {
      c.part_of_refused(path, "the experts' layout (see /model/moe)");
    }
  } else {
    c.unused("/model/moe", "dense model");
    for (const char* path : {"/parallel/ep", "/parallel/etp", "/parallel/moe_dispatcher",
                             "/parallel/moe_shared_expert_overlap"}) {
      c.unused(path, "dense model: no experts to lay out");
    }
  }
  if (m.explicit_head_dim > 0 && m.explicit_head_dim * m.heads != m.hidden) {
    c.cannot("/model/head_dim", "a head width other than hidden / heads", why, "hidden / heads");
  } else {
    c.unused("/model/head_dim", "hidden / heads");
  }
  if (m.qk_norm != strat::QkNorm::kNone) {
    c.cannot("/model/qk_norm", "query/key norms", why, "no query/key norm");
  } else {
    c.unused("/model/qk_norm", "no query/key norm");
  }
  if (m.mla.enabled()) {
    c.cannot("/model/mla", "multi-head latent attention", why, "grouped-query attention");
  } else {
    c.unused("/model/mla", "grouped-query attention");
  }
  if (m.mtp_layers > 0) {
    c.cannot("/model/mtp_layers", "multi-token prediction modules", why, "no MTP module");
  } else {
    c.unused("/model/mtp_layers", "no multi-token prediction");
  }
}

void cover_placements(const strat::Scenario& s, ExportContext& c) {
  const auto& p = s.parallel;
  const bool low_rank = s.model.low_rank.enabled();
  if (low_rank) {
    c.cannot("/model/low_rank", "low-rank (bottleneck) linears (BOOST, arXiv 2512.12131)",
             "no export target (BOOST's own code)", "dense linears of the same hidden sizes");
  } else {
    c.unused("/model/low_rank", "dense model");
  }
  if (p.tp_placement == strat::TpPlacement::kMegatron) {
    c.mapped("/parallel/tp_placement", "Megatron-style tensor parallelism (the trainers' own)");
  } else {
    const bool tsp = p.tp_placement == strat::TpPlacement::kTsp;
    c.cannot(
        "/parallel/tp_placement",
        fmt::format("the {} tensor-parallel placement", strat::tp_placement_name(p.tp_placement)),
        tsp ? "no export target (TSP's own code, arXiv 2604.26294)"
            : "no export target (BOOST's own code)",
        "Megatron-style tensor parallelism of the same degree");
  }
  if (p.tp_placement == strat::TpPlacement::kTsp) {
    c.part_of_refused("/parallel/tsp_kv_buckets", "part of the refused TSP placement");
  } else {
    c.unused("/parallel/tsp_kv_buckets", "applies to the tsp placement only");
  }
  const char* boost_why = low_rank ? "part of the refused low-rank placement"
                                   : "BOOST's optimizations apply to low-rank models only";
  for (const char* path : {"/parallel/online_rmsnorm", "/parallel/linear_grouping",
                           "/parallel/lowrank_checkpointing"}) {
    if (low_rank) {
      c.part_of_refused(path, boost_why);
    } else {
      c.unused(path, boost_why);
    }
  }
}

void cover_shampoo_fields(const strat::Scenario& s, ExportContext& c, const std::string& why) {
  const bool adamw = s.optimizer.kind == strat::OptimizerKind::kAdamW;
  for (const char* path :
       {"/optimizer/block_size", "/optimizer/precondition_frequency", "/optimizer/solver",
        "/optimizer/iterations", "/optimizer/chebyshev_degree", "/optimizer/scaling",
        "/optimizer/precision", "/optimizer/grafting", "/optimizer/stacking",
        "/optimizer/allow_tf32"}) {
    if (adamw) {
      c.unused(path, "applies to shampoo and dash only");
    } else {
      c.part_of_refused(path, why);
    }
  }
}

void cover_fsdp2_elsewhere(const strat::Scenario& s, ExportContext& c,
                           const std::string& closest) {
  if (!s.parallel.fsdp2.enabled) {
    c.mapped("/parallel/sharding", "as zero_stage");
    c.unused("/parallel/fsdp", "sharding is not fsdp2");
    return;
  }
  c.cannot("/parallel/sharding",
           "FSDP2 as torchtitan applies it (fp32 shards, a unit per block plus the embedding "
           "and the norm with the head, reductions in fp32)",
           "torchtitan", closest);
  c.unused("/parallel/fsdp", "FSDP2's options, with FSDP2 refused");
}

void cover_paci_mode(const strat::Scenario& s, ExportContext& c) {
  if (s.parallel.schedule == strat::PipelineSchedule::kPaci) {
    c.part_of_refused("/parallel/paci_mode", "part of the refused paci schedule");
  } else {
    c.unused("/parallel/paci_mode", "applies to the paci schedule only");
  }
}

void cover_megatron_ddp_elsewhere(const strat::Scenario& s, ExportContext& c,
                                  const std::string& closest) {
  if (s.parallel.dp_bucket_layout == strat::DpBucketLayout::kMegatron) {
    c.cannot("/parallel/dp_bucket_layout", "megatron-core's DDP gradient buckets", "megatron",
             closest);
  } else {
    c.mapped("/parallel/dp_bucket_layout", "whole layers (see /parallel/dp_bucket)");
  }
  if (s.parallel.overlap_param_gather) {
    c.cannot("/parallel/overlap_param_gather",
             "the distributed optimizer's parameter all-gather per bucket under the next forward",
             "megatron (--overlap-param-gather)", "the all-gather after the step");
  } else {
    c.unused("/parallel/overlap_param_gather", "off");
  }
}

long long bucket_elements(const strat::Scenario& s) {
  return std::llround(s.parallel.dp_bucket.value / s.training.gradient_bytes());
}

}  // namespace parasim::exporter
