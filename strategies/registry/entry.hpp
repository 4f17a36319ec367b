#pragma once
// parasim::strat registry entries — what a registered strategy says about itself: its kind, its
// name, a one-line description, the paper it comes from, its parameters (scenario path, unit,
// default, legal range or choices), its validation rules, and what builds it.
//
// The shape follows two simulators that document their models in code: SimGrid's registered
// model plug-ins (each with a name, a description and an init function, listable with
// --cfg=network/model:help) and SST's self-describing element parameters
// (SST_ELI_DOCUMENT_PARAMS: name, description, default, printed by sst-info). Unlike both, the
// list is explicit (strategies/registry/registry.cpp), never static self-registration, which
// silently loses entries under static linking.
//
// Invariants (tests/strategies/registry_test.cpp): names are unique within a kind; every entry
// has a description and a paper with its year; a parameter has choices, a whole-number range or
// a range text; an entry's `traits` alternative matches its kind.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "costmodel/activation_memory.hpp"
#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

struct StagePlan;
struct ScheduleShape;
struct ZeroBubbleOrder;

// The kinds of strategy a scenario chooses one of, in the order `parasim list` prints them.
enum class EntryKind : std::uint8_t {
  kSchedule,         // parallel.schedule
  kTpPlacement,      // parallel.tp_placement
  kContextParallel,  // parallel.cp_variant (with cp > 1)
  kSharding,         // parallel.sharding (or parallel.zero_stage)
  kOptimizer,        // optimizer.name (+ stacking for DASH)
  kAttention,        // training.attention
  kRecompute,        // training.recompute
  kFramework,        // training.framework
  kDispatcher,       // parallel.moe_dispatcher (with model.moe)
  kPrecision,        // training.precision (+ training.fp8.recipe)
  kOffload,          // parallel.offload (optimizer state in host memory)
  kTpCommOverlap,    // parallel.tp_comm_overlap (TP collectives overlapped with GEMMs)
  kAllocator,        // training.allocator (PyTorch's caching allocator mode)
};
inline constexpr EntryKind kAllEntryKinds[] = {
    EntryKind::kSchedule,  EntryKind::kTpPlacement, EntryKind::kContextParallel,
    EntryKind::kSharding,  EntryKind::kOptimizer,   EntryKind::kAttention,
    EntryKind::kRecompute, EntryKind::kFramework,   EntryKind::kDispatcher,
    EntryKind::kPrecision, EntryKind::kOffload,     EntryKind::kTpCommOverlap,
    EntryKind::kAllocator};

// A validation rule: appends every problem of `scenario` it finds to `d`, each with the JSON
// path of the field a user should change. Rules never throw and never stop at the first problem.
using Rule = void (*)(const Scenario& scenario, cost::Diagnostics& d);

// One parameter a scenario may set for an entry.
struct ParameterSpec {
  std::string path;           // JSON path in a scenario: "/parallel/chunks"
  std::string unit;           // "" (a name, a flag or a count without unit), "bytes", "GPUs", ...
  std::string default_value;  // as written in a scenario ("1", "perf", "25 MB"), or how it is found
  std::vector<std::string> choices;  // the legal values of a string parameter, in schema order
  bool list = false;          // a list of `choices` (a JSON array of distinct strings)
  std::int64_t min = 0;       // the legal range of a whole-number parameter (is_whole_number())
  std::int64_t max = -1;
  std::string range_text;     // the legal range of anything else ("true or false", "1 B to 1 TB")
  std::string meaning;        // one line
  // Run when the scenario's chosen entry of this kind does not take this parameter (for example
  // paci_mode with a schedule other than paci); null when setting it is harmless then.
  Rule when_not_taken = nullptr;

  bool is_whole_number() const { return min <= max; }
  std::string key() const { return path.substr(path.rfind('/') + 1); }
  // "a, b, c", "MIN to MAX" or range_text.
  std::string legal_values() const;
};

// Builds a schedule's item order for one stage: what pipeline_schedule.hpp's stage_plan runs.
using StageOrder = void (*)(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                            StagePlan& plan);

// What the closed forms of a schedule read (the planner's screen): per-stage pass times of one
// micro-batch, in seconds, and the pipeline's shape.
struct StagePassTimes {
  int micro_batches = 1;  // m, per replica and step
  int stages = 1;         // P
  int chunks = 1;         // v, model chunks per stage
  double sum_fbw = 0;     // sum over stages of F + B + W
  double max_fb = 0;      // max over stages of F + B
  double max_fbw = 0;     // max over stages of F + B + W
  double f = 0, b = 0, w = 0;  // max over stages of each pass
  double hops = 0;        // 2 (P - 1) point-to-point transfers
};
// The time from the first forward to the last backward, from the schedule's closed form (its
// paper's bubble; docs/schedules.md).
using ClosedFormTime = double (*)(const StagePassTimes& t);
// Optimizer updates a micro-batch's backward sees beyond the weights its forward used.
using ClosedFormStaleness = int (*)(int stages, int micro_batches);
// Activation sets stage `stage` holds at its peak, the last stage included (in whole-stage
// micro-batches; the screen adds the head's logits on the head's stage).
using ClosedFormActivationSets = int (*)(int stages, int stage, int micro_batches);
// Optimizer steps per training step (PipeDream: one per micro-batch).
using ClosedFormUpdates = int (*)(int micro_batches);

// What a schedule entry builds and how it behaves (pipeline_schedule.hpp reads these; the
// planner's screen and rules read the closed forms; null ones take the 1F1B default: staleness
// 0, min(m, P - stage) activation sets, 1 update).
struct ScheduleTraits {
  PipelineSchedule id = PipelineSchedule::kOneFOneB;
  StageOrder order = nullptr;
  bool asynchronous = false;            // no flush; stage-local optimizer steps
  bool splits_weight_gradient = false;  // backward split into B and W (zero bubble)
  bool searched = false;                // order from zero_bubble_search.hpp
  int searched_memory_multiple = 0;     // the search's memory limit in p x M_B (zb-1p 1, zb-2p 2)
  bool stashes_weights = false;         // a micro-batch's backward uses its forward's weights
  ClosedFormTime pipeline_time = nullptr;  // required
  ClosedFormStaleness staleness = nullptr;
  ClosedFormActivationSets activation_sets = nullptr;
  ClosedFormUpdates updates = nullptr;
};

struct PlacementTraits {
  TpPlacement id = TpPlacement::kMegatron;
  bool low_rank = false;        // places the low-rank pairs of a model with "low_rank"
  bool folds_sequence = false;  // also shards the sequence over tp (TSP): a layout, not only a placement
};

struct ContextParallelTraits {
  CpComm comm = CpComm::kRing;  // ParallelSpec::cp_comm
};

struct ShardingTraits {
  int zero_stage = 0;
  bool fsdp2 = false;  // PyTorch's fully_shard (ParallelSpec::fsdp2), zero_stage 3's sharding
};

struct OptimizerTraits {
  OptimizerKind kind = OptimizerKind::kAdamW;
  Stacking stacking = Stacking::kNone;
};

struct FrameworkTraits {};  // framework presets are their own table (framework_presets.hpp)

// How an MoE layer's tokens reach their experts (moe_layer.hpp): ParallelSpec::moe_dispatcher.
struct DispatcherTraits {
  MoeDispatcher id = MoeDispatcher::kAllToAll;
};

// The GEMMs' number format: TrainingSpec::precision and TrainingSpec::fp8.recipe.
struct PrecisionTraits {
  cost::Dtype dtype = cost::Dtype::kBf16;
  cost::QuantRecipe recipe = cost::QuantRecipe::kNone;
};

// Where the optimizer state lives and who steps it: ParallelSpec::offload.flavour.
struct OffloadTraits {
  cost::OffloadFlavour flavour = cost::OffloadFlavour::kNone;
};

// How the TP collectives meet the GEMMs: ParallelSpec::tp_comm_overlap.
struct TpCommOverlapTraits {
  TpCommOverlap id = TpCommOverlap::kNone;
};

// The caching allocator's mode: TrainingSpec::allocator_kind().
struct AllocatorTraits {
  AllocatorKind id = AllocatorKind::kCaching;
};

using EntryTraits = std::variant<ScheduleTraits, PlacementTraits, ContextParallelTraits,
                                 ShardingTraits, OptimizerTraits, AttentionKind, cost::Recompute,
                                 FrameworkTraits, DispatcherTraits, PrecisionTraits,
                                 OffloadTraits, TpCommOverlapTraits, AllocatorTraits>;

struct Entry {
  EntryKind kind = EntryKind::kSchedule;
  std::string name;         // unique in its kind: what `list`, `compare` and `plan` call it
  std::string value;        // what a scenario writes for it ("dash" for dash-layer, "3" for zero-3)
  std::string description;  // one line
  std::string paper;        // citation with its year and arXiv id
  std::vector<ParameterSpec> parameters;  // the parameters only this entry (or its family) takes
  std::vector<Rule> rules;  // run when a scenario chooses this entry
  std::string builder;      // the function that builds it, for readers ("layer_program.cpp: ...")
  EntryTraits traits;
};

}  // namespace parasim::strat
