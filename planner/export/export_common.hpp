#pragma once
// parasim::exporter common mappings — what every target does alike: metadata and hardware
// (no trainer setting), the launcher (nodes x GPUs per node), the features no export target
// has (BOOST's low-rank placements, TSP), the Shampoo fields of an AdamW scenario; and the
// seams where fields other work adds to the scenario will map (one function each).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/export/export_context.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

// Command-line arguments in order: a flag and its value, or a flag alone.
class ArgList {
 public:
  void add(std::string flag) { args_.emplace_back(std::move(flag), std::nullopt); }
  void add(std::string flag, std::string value) {
    args_.emplace_back(std::move(flag), std::move(value));
  }
  const std::vector<std::pair<std::string, std::optional<std::string>>>& args() const {
    return args_;
  }
  // One argument per line ("--flag value"), ready for `$(cat FILE)`.
  std::string lines() const;
  // A JSON list of the words: ["--flag", "value", ...].
  std::string json_list() const;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> args_;
};

// Metadata, hardware and cost-model figures: /name, /description, /$schema, presets and names,
// /cluster/device, links, rails, /optimizer/host_op_overhead.
void cover_not_trainer(const strat::Scenario& s, ExportContext& c);
// /cluster/nodes and /cluster/gpus_per_node as the launch command `launcher` ("torchrun" or
// "deepspeed") takes them, with /training/allocator as its environment (PYTORCH_CUDA_ALLOC_CONF).
void cover_launcher(const strat::Scenario& s, ExportContext& c, const std::string& launcher);
// BOOST (low-rank linears, vanilla/BTP placements and their optimizations) and TSP: the code of
// their papers only; refused (or written as dense Megatron-style TP) on every target.
void cover_placements(const strat::Scenario& s, ExportContext& c);
// Targets that write no experts and none of the MoE presets' attention variants: each one used
// refused with `why` (DeepSpeed: in model code; torchtitan: its own model flavours), the rest
// unused. Megatron-LM maps them (megatron_experts.hpp).
void cover_experts_elsewhere(const strat::Scenario& s, ExportContext& c, const std::string& why);
// The Shampoo/DASH fields, for a target whose optimizer is not Shampoo's constructor: unused with
// AdamW, part of the refused optimizer otherwise.
void cover_shampoo_fields(const strat::Scenario& s, ExportContext& c, const std::string& why);
// /parallel/paci_mode: only with the paci schedule (which every target refuses).
void cover_paci_mode(const strat::Scenario& s, ExportContext& c);
// parallel.sharding and parallel.fsdp on a target without torchtitan's FSDP2: zero-N as its
// zero_stage seam maps it; fsdp2 refused (`closest`: what the target writes instead).
void cover_fsdp2_elsewhere(const strat::Scenario& s, ExportContext& c,
                           const std::string& closest);
// parallel.dp_bucket_layout and overlap_param_gather on a target other than Megatron-LM: whole
// layers mapped with dp_bucket; megatron-core's layout and --overlap-param-gather refused
// (`closest`: what the target's reduction does instead).
void cover_megatron_ddp_elsewhere(const strat::Scenario& s, ExportContext& c,
                                  const std::string& closest);

// training.framework: the framework whose host loop the step was simulated for. Its name,
// preset and version are stated (the export's target is a trainer: a scenario modelled as
// another framework, or another version of the same one, says so); its host costs, counts,
// fusions and pipeline-transfer semantics are cost-model figures of that framework's code (no
// trainer setting). cuda_graphs and the data-parallel reduction (gradient_reduction and the
// bucket) are mapped by each target with parallel.dp_bucket.
void cover_framework(const strat::Scenario& s, ExportContext& c, Target target);
// Records /training/framework/gradient_reduction, gradient_bucket and gradient_bucket_elements
// with the target's mapping of the data-parallel reduction (`detail`), or as unused without
// replicas.
void cover_framework_reduction(const strat::Scenario& s, ExportContext& c,
                               const std::string& detail);
// The refusal of a CUDA-graphed framework (cuda_graphs) on a target that launches eagerly;
// eager frameworks are mapped as the target's default.
void cover_cuda_graphs_eager_target(const strat::Scenario& s, ExportContext& c);

// Stages: /parallel/pp recorded with its layer split. Even stages (every virtual stage holds
// layers / (pp x chunks)) are every target's default; an uneven split is the target's to map
// (megatron_export.cpp, torchtitan_export.cpp) or refuse (uneven_stages_refused).
void cover_stage_layers(const strat::Scenario& s, ExportContext& c, Target target);
// True when the scenario's virtual stages do not all hold the same layer count.
bool uneven_stages(const strat::Scenario& s);
// "[4, 8, 8, 4]"
std::string stage_layers_text(const strat::Scenario& s);
// /parallel/stage_layers mapped to `key`, or unused with even stages; first/last_stage_layers
// recorded as read into it.
void stage_layers_mapped(const strat::Scenario& s, ExportContext& c, const std::string& key);
// /parallel/stage_layers refused (uneven stages the target cannot split so), the first/last
// fields as part of it; `supported_by` names the targets that can.
void stage_layers_refused(const strat::Scenario& s, ExportContext& c,
                          const std::string& supported_by, const std::string& closest);
// zb-1p / zb-2p (Qi et al.'s searched zero-bubble schedules): no export target has them.
void refuse_searched_zero_bubble(const strat::Scenario& s, ExportContext& c,
                                 const std::string& closest);
// /parallel/optimizer_post_validation: no export target validates the step afterwards.
void cover_post_validation(const strat::Scenario& s, ExportContext& c);

// Gradient elements in a bucket of `bytes` (Megatron's --ddp-bucket-size and DeepSpeed's
// reduce_bucket_size count elements; the scenario's dp_bucket is bytes of gradients).
long long bucket_elements(const strat::Scenario& s);
// The scenario's micro-batches per pipeline per step (its gradient accumulation).
inline int accumulation_steps(const strat::Scenario& s) {
  return s.micro_batches();
}
// "8 GPUs (2 nodes x 4 GPUs per node)"
std::string world_text(const strat::Scenario& s);

}  // namespace parasim::exporter
