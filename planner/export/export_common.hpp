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
#include "strategies/scenario.hpp"

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
// "deepspeed") takes them.
void cover_launcher(const strat::Scenario& s, ExportContext& c, const std::string& launcher);
// BOOST (low-rank linears, vanilla/BTP placements and their optimizations) and TSP: the code of
// their papers only; refused (or written as dense Megatron-style TP) on every target.
void cover_placements(const strat::Scenario& s, ExportContext& c);
// The Shampoo/DASH fields, for a target whose optimizer is not Shampoo's constructor: unused with
// AdamW, part of the refused optimizer otherwise.
void cover_shampoo_fields(const strat::Scenario& s, ExportContext& c, const std::string& why);
// /parallel/paci_mode: only with the paci schedule (which every target refuses).
void cover_paci_mode(const strat::Scenario& s, ExportContext& c);

// Seams for fields being added to the scenario. Each records what the target does with it;
// until a field exists its seam has nothing to record, and the schema-coverage test of
// tests/planner fails for a new key until its seam maps it.
//   training.framework (megatron-lm, megatron-deepspeed, deepspeed, torchtitan, ...): the
//     framework the scenario simulates; an export to another trainer must say so.
void cover_framework(const strat::Scenario& s, ExportContext& c, Target target);
//   parallel.stage_layers / first and last stage layers (uneven stages): Megatron-LM's
//     --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers, torchtitan's
//     pipeline_parallel_first/last_stage_less_layers or module_fqns_per_model_part, DeepSpeed's
//     PipelineModule(partition_method=...). Today every stage has layers / pp: recorded as such.
void cover_stage_layers(const strat::Scenario& s, ExportContext& c, Target target);

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
