#include "strategies/registry/scenario_rules.hpp"

#include <fmt/format.h>

#include <map>

#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

void tp_divides_heads(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const int tp = s.parallel.tp;
  if (m.heads > 0 && m.heads % tp != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide the number of attention heads ({})",
                                      tp, m.heads));
  } else if (m.kv_heads > 0 && m.kv_heads % tp != 0) {
    d.add("/parallel/tp",
          fmt::format("tp ({}) must divide the number of kv heads ({})", tp, m.kv_heads));
  }
}

// Every pipeline stage holds at least one layer: an even split, or stage_layers' counts. With
// interleaving a virtual stage may hold none: Megatron builds it as one no-op layer (legacy
// model/transformer.py, NoopTransformerLayer, a clone of its input), as the Zero Bubble fork
// does for the chunks its --allow-padding-num-layers empties (sail-sg/zero-bubble-pipeline-
// parallelism @39f2c186, ParallelTransformer.get_offset).
void layers_fill_stages(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const auto& p = s.parallel;
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
    } else {
      for (int st = 0; st < p.pp; ++st) {
        int stage_sum = 0;
        for (int c = 0; c < p.chunks; ++c) {
          const int v = c * p.pp + st;
          const int n = p.stage_layers[static_cast<std::size_t>(v)];
          stage_sum += n;
          if (n == 0 && p.chunks == 1) {
            d.add(fmt::format("/parallel/stage_layers/{}", v),
                  "a stage without layers: every pipeline stage needs at least one layer (a "
                  "virtual stage of only a no-op layer needs interleaving, chunks > 1)");
          }
        }
        if (stage_sum == 0 && p.chunks > 1) {
          d.add("/parallel/stage_layers",
                fmt::format("stage {} gets no layer in any of its {} chunks: every pipeline "
                            "stage needs at least one layer",
                            st, p.chunks));
        }
      }
    }
  } else if (m.layers > 0 && m.layers % (p.pp * p.chunks) != 0) {
    d.add(p.chunks > 1 ? "/parallel/chunks" : "/parallel/pp",
          fmt::format("pp x chunks ({} x {}) must divide the layer count ({}) so that layers "
                      "split evenly over stages; for uneven stages give parallel.stage_layers "
                      "(or first_stage_layers / last_stage_layers)",
                      p.pp, p.chunks, m.layers));
  }
}

// Low-rank models, whatever their placement (the placement's own rules say which one they need).
void low_rank_model_limits(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  if (s.model.low_rank.enabled() &&
      (p.sequence_parallel || splits_weight_gradient(p.schedule) ||
       s.training.recompute != cost::Recompute::kNone)) {
    d.add("/parallel", "low-rank placements are modelled without sequence parallelism, zero-bubble "
                       "schedules or Korthikanti recompute (use lowrank_checkpointing)");
  }
}

void global_batch_splits(const Scenario& s, cost::Diagnostics& d, const ScenarioLimits& limits) {
  const auto& t = s.training;
  const long long per_step = static_cast<long long>(t.micro_batch) * s.parallel.dp;
  if (t.global_batch > 0 && t.global_batch % per_step != 0) {
    d.add("/training/global_batch",
          fmt::format("global_batch ({}) must be a multiple of micro_batch x dp ({} x {} = {})",
                      t.global_batch, t.micro_batch, s.parallel.dp, per_step));
  } else if (t.global_batch > 0 && t.global_batch / per_step > limits.max_micro_batches) {
    d.add("/training/global_batch",
          fmt::format("{} micro-batches per step is over the limit of {}",
                      t.global_batch / per_step, limits.max_micro_batches));
  }
}

long long degree_product(const ParallelSpec& p) {
  return static_cast<long long>(p.dp) * p.tp * p.pp * p.cp;
}

void degrees_use_every_gpu(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const long long gpus = degree_product(p);
  if (gpus != s.cluster.total_gpus() && s.cluster.total_gpus() > 0) {
    d.add("/parallel", fmt::format("dp x tp x pp x cp = {} x {} x {} x {} = {} GPUs, but the "
                                   "cluster has {} ({} nodes x {} GPUs); change the degrees or "
                                   "/cluster/nodes",
                                   p.dp, p.tp, p.pp, p.cp, gpus, s.cluster.total_gpus(),
                                   s.cluster.nodes, s.cluster.gpus_per_node));
  }
}

void tp_groups_fit_nodes(const Scenario& s, cost::Diagnostics& d) {
  const int gpn = s.cluster.gpus_per_node;
  const int tp = s.parallel.tp;
  if (tp > 1 && tp <= gpn && gpn % tp != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide gpus_per_node ({}) so that tensor-"
                                      "parallel groups do not straddle nodes unevenly",
                                      tp, gpn));
  } else if (tp > gpn && tp % gpn != 0) {
    d.add("/parallel/tp", fmt::format("tp ({}) spans nodes, so it must be a multiple of "
                                      "gpus_per_node ({})",
                                      tp, gpn));
  }
}

// Every data-parallel group must have the same number of members on each node it spans (the
// collective model takes members per node); rank = tp_rank + tp * (dp_rank + dp * stage).
void replica_groups_even_on_nodes(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const int gpn = s.cluster.gpus_per_node;
  const int replicas = p.dp * p.cp;
  if (replicas <= 1 || gpn <= 0 || degree_product(p) != s.cluster.total_gpus()) return;
  bool uneven = false;
  for (long long stage = 0; stage < p.pp && !uneven; ++stage) {
    for (long long r = 0; r < p.tp && r < 64 && !uneven; ++r) {
      std::map<long long, int> per_node;
      for (long long dr = 0; dr < replicas; ++dr) {
        ++per_node[(r + p.tp * (dr + replicas * stage)) / gpn];
      }
      const int first = per_node.begin()->second;
      for (const auto& node_count : per_node) uneven = uneven || node_count.second != first;
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
void pipeline_hops_on_rails(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const int gpn = s.cluster.gpus_per_node;
  const long long stride = static_cast<long long>(p.tp) * p.dp * p.cp;
  if (s.cluster.rails_only && p.pp > 1 && s.cluster.nodes > 1 && gpn > 0 && stride % gpn != 0 &&
      stride * p.pp > gpn) {
    d.add("/cluster/rails_only",
          fmt::format("on a rails-only fabric pipeline hops between nodes must stay on a rail: "
                      "tp x dp x cp ({}) must be a multiple of gpus_per_node ({})",
                      stride, gpn));
  }
}

void tp_divides_widths(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const int tp = s.parallel.tp;
  if (m.hidden > 0 && (m.hidden % tp != 0 || m.ffn_hidden % tp != 0)) {
    d.add("/parallel/tp", fmt::format("tp ({}) must divide hidden ({}) and ffn_hidden ({})", tp,
                                      m.hidden, m.ffn_hidden));
  }
}

void sequence_parallel_needs_tp(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.sequence_parallel && s.parallel.tp == 1) {
    d.add("/parallel/sequence_parallel", "sequence parallelism needs tp > 1");
  }
}

// Multi-head latent attention is built for the megatron placement without context parallelism
// (mla_attention.hpp); the ring-attention and TSP programs are GQA's.
void latent_attention_modelled(const Scenario& s, cost::Diagnostics& d) {
  if (!s.model.mla.enabled()) return;
  if (s.parallel.cp > 1) {
    d.add("/parallel/cp", "multi-head latent attention is not modelled with context parallelism");
  }
  if (s.parallel.tp_placement != TpPlacement::kMegatron) {
    d.add("/parallel/tp_placement", "multi-head latent attention is modelled with the megatron "
                                    "placement");
  }
}

// ep and etp lay out experts: without them they would be silently ignored.
void expert_degrees_need_experts(const Scenario& s, cost::Diagnostics& d) {
  if (s.model.moe.enabled()) return;
  if (s.parallel.ep > 1) {
    d.add("/parallel/ep", "ep > 1 needs a model with experts (model.moe)");
  }
  if (s.parallel.etp > 0 && s.parallel.etp != s.parallel.tp) {
    d.add("/parallel/etp", "etp needs a model with experts (model.moe)");
  }
  if (s.parallel.moe_shared_expert_overlap) {
    d.add("/parallel/moe_shared_expert_overlap", "needs a model with experts (model.moe)");
  }
}

// torch.compile's fused kernels are modelled for torchtitan's dense block alone
// (strategies/layers/torchtitan_block.hpp); elsewhere its host costs would price other kernels.
void compiled_block_modelled(const Scenario& s, cost::Diagnostics& d) {
  const FrameworkSpec& f = s.training.framework;
  if (!f.compile.enabled) return;
  if (f.kernels != LayerKernels::kTorchtitan) {
    d.add("/training/framework/compile",
          fmt::format("torch.compile is modelled on torchtitan's block; framework \"{}\" runs "
                      "Megatron-LM's layer (use the torchtitan preset, or \"kernels\": "
                      "\"torchtitan\")",
                      f.name));
    return;
  }
  std::string why;
  if (s.model.moe.enabled()) why = "a mixture of experts";
  else if (s.model.mla.enabled()) why = "multi-head latent attention";
  else if (s.model.low_rank.enabled()) why = "low-rank layers";
  else if (s.parallel.tp_placement == TpPlacement::kTsp) why = "the tsp placement";
  if (!why.empty()) {
    d.add("/training/framework/compile",
          fmt::format("torch.compile is modelled for torchtitan's dense block; not with {}", why));
  }
}

void device_has_precision(const Scenario& s, cost::Diagnostics& d) {
  const cost::Dtype precision = s.training.precision;
  if (s.cluster.device.peak(precision).flop_per_s <= 0) {
    d.add("/training/precision", fmt::format("the device has no {} peak FLOP rate; add "
                                             "/cluster/device/peak/{}",
                                             cost::dtype_name(precision),
                                             cost::dtype_name(precision)));
  }
}

}  // namespace

void check_scenario_rules(const Scenario& s, cost::Diagnostics& d, const ScenarioLimits& limits) {
  tp_divides_heads(s, d);
  layers_fill_stages(s, d);
  check_entry_rules(s, d);  // the chosen schedule, placement, cp mode, ZeRO stage, optimizer, ...
  low_rank_model_limits(s, d);
  global_batch_splits(s, d, limits);
  degrees_use_every_gpu(s, d);
  tp_groups_fit_nodes(s, d);
  replica_groups_even_on_nodes(s, d);
  pipeline_hops_on_rails(s, d);
  tp_divides_widths(s, d);
  sequence_parallel_needs_tp(s, d);
  expert_degrees_need_experts(s, d);
  latent_attention_modelled(s, d);
  compiled_block_modelled(s, d);
  device_has_precision(s, d);
}

}  // namespace parasim::strat
