#pragma once
// parasim::plan::TrainerFilter — `parasim plan --for TRAINER` (megatron, deepspeed, torchtitan):
// the space holds only what that trainer, at the version the exports target, can run: its
// schedules, ZeRO/FSDP modes and their combinations with pipelining, TP placements, recompute
// modes, attention kernels. One truth: a candidate is the trainer's when the trainer's own
// exporter (planner/export/) writes it with no difference (no --allow-approximate needed), so the
// planner and `parasim export` can never disagree.
//
// The answer is memoised per thread on the whole candidate but for the fields no exporter's
// acceptance depends on: the GPU count, the micro-batch and the dp degree (only whether there are
// replicas, dp x cp > 1). A field added to Candidate is part of the key unless it is cleared in
// filter_key(). tests/planner/plan_for_trainer_test.cpp checks, for every candidate of several
// spaces (uneven stages included), that the memoised answer is the exporter's.
//
// The base scenario is the one with the trainer's defaults (planner/export/trainer_defaults.hpp).
// What no layout changes (the model, the optimizer, the precision) is refused up front:
// fixed_refusals() lists it, and `plan --for` stops with those reasons (exit 2). The precision
// rule is the exports' (planner/export/fp8_export.hpp): an FP8 recipe the trainer does not run is
// a difference at /training/precision or /training/fp8/..., outside the layout: Megatron-LM
// refuses torchao's recipes, torchtitan (0.3.0) Transformer Engine's and torchao-tensorwise,
// DeepSpeed every FP8 recipe. An FP8 setting that depends on the layout (torchtitan 0.2.2's
// float8 all-gather needs FSDP) is left to the filter by the probes below; so is a refused
// precision when search.precision lists others: a probe with another recipe clears it.

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "planner/candidate.hpp"
#include "planner/export/export_types.hpp"
#include "planner/screen.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::plan {

class TrainerFilter {
 public:
  TrainerFilter(const strat::Scenario& base, exporter::Target trainer)
      : base_(base), trainer_(trainer) {}

  // Whether the trainer runs the candidate as planned.
  bool accepts(const Candidate& c);

 private:
  const strat::Scenario& base_;
  exporter::Target trainer_;
  std::unordered_map<Candidate, bool, CandidateHash> cache_;
};

// The differences of the trainer's export of `scenario` (the scenario as given, its own layout).
std::vector<exporter::Difference> export_differences(const strat::Scenario& scenario,
                                                     exporter::Target trainer);

// The differences no candidate of `space` removes: those outside the searched fields (the
// parallel section, the micro-batch, recompute, attention, the optimizer's implementation, the
// framework's data-parallel reduction) that the export of every probe candidate still has. The
// probes are candidates that pass the rules, sampled over the whole space (up to 256, each the
// first that passes from an evenly spaced index), so that a setting refused with one ZeRO stage
// or pipeline depth and accepted with another (DeepSpeed's fp32 gradients of bf16 training,
// torchtitan's CUDA graphs) is left to the filter. With no probe, every such difference of
// `base` itself. Empty: some layout may run.
std::vector<exporter::Difference> fixed_refusals(const strat::Scenario& base,
                                                 const SearchSpace& space,
                                                 exporter::Target trainer);

// The trainers (megatron, deepspeed, torchtitan) that run the scenario `document` describes as it
// is, each with its defaults where the document does not choose (as `plan --for` simulates it):
// the table's "runs on" column without --for. `file` names it in nothing but messages.
std::vector<exporter::Target> trainers_running(const nlohmann::json& document,
                                               const std::string& file);

// "megatron", "deepspeed", "torchtitan": the trainers `plan --for` takes.
inline constexpr exporter::Target kTrainers[] = {
    exporter::Target::kMegatron, exporter::Target::kDeepSpeed, exporter::Target::kTorchtitan};

}  // namespace parasim::plan
