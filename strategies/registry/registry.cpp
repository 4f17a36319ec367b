#include "strategies/registry/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <type_traits>

#include "costmodel/json_fields.hpp"
#include "strategies/registry/kind_lists.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// The list. A new schedule adds its line here (in the order the schema lists the values).
std::vector<Entry> build_entries() {
  std::vector<Entry> out = {
      gpipe_schedule(), one_f_one_b_schedule(), interleaved_schedule(), interleaved_zb_schedule(),
      zb_h1_schedule(), zb_h2_schedule(),       zb_1p_schedule(),       zb_2p_schedule(),
      zb_v_schedule(),  dualpipev_schedule(),   pipedream_schedule(),   pipedream_2bw_schedule(),
      paci_schedule(),
  };
  for (auto list :
       {placement_entries, context_parallel_entries, sharding_entries, optimizer_entries,
        attention_entries, recompute_entries, framework_entries, dispatcher_entries,
        precision_entries, offload_entries, tp_comm_overlap_entries, allocator_entries}) {
    for (Entry& e : list()) out.push_back(std::move(e));
  }
  return out;
}

ParameterSpec whole(const std::string& path, const std::string& unit,
                    const std::string& default_value, std::int64_t min, std::int64_t max,
                    const std::string& meaning) {
  ParameterSpec p;
  p.path = path;
  p.unit = unit;
  p.default_value = default_value;
  p.min = min;
  p.max = max;
  p.meaning = meaning;
  return p;
}

ParameterSpec text(const std::string& path, const std::string& unit,
                   const std::string& default_value, const std::string& range,
                   const std::string& meaning) {
  ParameterSpec p;
  p.path = path;
  p.unit = unit;
  p.default_value = default_value;
  p.range_text = range;
  p.meaning = meaning;
  return p;
}

// megatron-core 0.19.2 distributed/param_and_grad_buffer.py and distributed_data_parallel.py
// (strategies/data_parallel/megatron_buckets.hpp).
ParameterSpec dp_bucket_layout() {
  ParameterSpec p = text("/parallel/dp_bucket_layout", "", "layers", "",
                         "gradient buckets of whole layers on every stage (layers), or "
                         "megatron-core's DDP buffers (megatron)");
  p.choices = {"layers", "megatron"};
  return p;
}

std::vector<KindInfo> build_kinds() {
  const std::string bucket_range = fmt::format("{} to {}", cost::kRanges.buffer_size.min_text,
                                               cost::kRanges.buffer_size.max_text);
  return {
      {EntryKind::kSchedule,
       "schedule",
       "/parallel/schedule",
       "pipeline parallelism: layers split evenly over stages or as given, activations and "
       "gradients sent point to point (1/t per TP rank, Megatron's scatter-gather); Narayanan "
       "et al. 2021, arXiv 2104.04473",
       {whole("/parallel/pp", "stages", "1", 1, 1 << 12, "pipeline stages"),
        text("/parallel/stage_layers", "layers", "even",
             "one count per (virtual) stage; every stage >= 1 (a virtual stage 0: a no-op layer)",
             "one count per stage (per virtual stage with chunks)"),
        text("/parallel/first_stage_layers", "layers", "even", "1 to the layers",
             "Megatron's --decoder-first-pipeline-num-layers; the rest split evenly"),
        text("/parallel/last_stage_layers", "layers", "even", "1 to the layers",
             "Megatron's --decoder-last-pipeline-num-layers; the rest split evenly")}},
      {EntryKind::kTpPlacement,
       "tp_placement",
       "/parallel/tp_placement",
       "how a layer's linears are split over the tp ranks",
       {whole("/parallel/tp", "GPUs", "1", 1, 1 << 12, "tensor-parallel group size"),
        text("/parallel/sequence_parallel", "", "false", "true or false",
             "Megatron sequence parallelism (Korthikanti et al. 2022); needs tp > 1")}},
      {EntryKind::kContextParallel,
       "cp_variant",
       "/parallel/cp_variant",
       "context parallelism, chosen by cp > 1: the sequence split over cp ranks holding the same "
       "weights",
       {whole("/parallel/cp", "GPUs", "1", 1, 1 << 12, "context-parallel ranks")}},
      {EntryKind::kSharding,
       "sharding",
       "/parallel/sharding",
       "data parallelism and what its replicas shard (ZeRO's stages, or PyTorch's FSDP2)",
       {whole("/parallel/dp", "GPUs", "1", 1, 1 << 20, "data-parallel replicas"),
        whole("/parallel/zero_stage", "", "0", 0, 3,
              "the ZeRO stage as a number: zero_stage N is sharding \"zero-N\""),
        text("/parallel/dp_bucket", "bytes", "the framework's (Megatron-LM: 40M elements)",
             bucket_range, "gradient bucket size"),
        dp_bucket_layout(),
        text("/parallel/overlap_param_gather", "", "false", "true or false",
             "Megatron's --overlap-param-gather: the distributed optimizer's all-gather per "
             "bucket under the next forward (zero_stage 1, dp_bucket_layout megatron)")}},
      {EntryKind::kOptimizer,
       "optimizer",
       "/optimizer/name",
       "the optimizer's step (DASH: name \"dash\" with its stacking)",
       {}},
      {EntryKind::kAttention, "attention", "/training/attention", "the attention core", {}},
      {EntryKind::kRecompute, "recompute", "/training/recompute", "activation recomputation", {}},
      {EntryKind::kFramework,
       "framework",
       "/training/framework",
       "the framework that issues the step's kernels (docs/frameworks.md); its fields may be "
       "overridden one by one",
       {}},
      {EntryKind::kDispatcher,
       "moe_dispatcher",
       "/parallel/moe_dispatcher",
       "mixture of experts: how tokens reach their experts, chosen when the model has model.moe; "
       "experts laid out by MoE parallel folding (arXiv 2504.14960)",
       {whole("/parallel/ep", "GPUs", "1", 1, 1 << 16,
              "expert-parallel ranks: each holds experts / ep of every MoE layer's experts"),
        whole("/parallel/etp", "GPUs", "tp", 1, 1 << 12,
              "expert tensor-parallel ranks: each expert's MLP split over them"),
        text("/parallel/moe_shared_expert_overlap", "", "false", "true or false",
             "the shared experts computed under the dispatch (alltoall or flex, shared "
             "experts)")}},
      {EntryKind::kPrecision,
       "precision",
       "/training/precision",
       "the GEMMs' number format: bf16, fp16, fp32, or fp8 with a scaling recipe "
       "(training.fp8.recipe; docs/fp8.md)",
       {}},
      {EntryKind::kOffload,
       "offload",
       "/parallel/offload",
       "optimizer offload: the optimizer state and its step in host memory, as each trainer "
       "does it (docs/offload.md)",
       {}},
      {EntryKind::kTpCommOverlap,
       "tp_comm_overlap",
       "/parallel/tp_comm_overlap",
       "the sequence-parallel all-gathers and reduce-scatters chunked and overlapped with the "
       "GEMMs beside them (docs/tp-overlap.md)",
       {}},
      {EntryKind::kAllocator,
       "allocator",
       "/training/allocator",
       "PyTorch's CUDA caching allocator mode (PYTORCH_CUDA_ALLOC_CONF), which sets the reserved "
       "memory the run holds beside its allocated memory; default: the framework's "
       "(docs/result.md#reserved-memory)",
       {}},
  };
}

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> table = build_kinds();
  return table;
}

bool chooses(const Entry& e, const Scenario& s) {
  const auto& p = s.parallel;
  return std::visit(
      [&](const auto& t) -> bool {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, ScheduleTraits>) return t.id == p.schedule;
        if constexpr (std::is_same_v<T, PlacementTraits>) return t.id == p.tp_placement;
        if constexpr (std::is_same_v<T, ContextParallelTraits>) {
          return p.cp > 1 && t.comm == p.cp_comm;
        }
        if constexpr (std::is_same_v<T, ShardingTraits>) {
          return t.zero_stage == p.zero_stage && t.fsdp2 == p.fsdp2.enabled;
        }
        if constexpr (std::is_same_v<T, OptimizerTraits>) {
          return t.kind == s.optimizer.kind &&
                 (t.kind != OptimizerKind::kDash || t.stacking == s.optimizer.stacking);
        }
        if constexpr (std::is_same_v<T, AttentionKind>) return t == s.training.attention;
        if constexpr (std::is_same_v<T, cost::Recompute>) return t == s.training.recompute;
        if constexpr (std::is_same_v<T, FrameworkTraits>) {
          return e.name == s.training.framework.name;
        }
        if constexpr (std::is_same_v<T, DispatcherTraits>) {
          return s.model.moe.enabled() && t.id == p.moe_dispatcher;
        }
        if constexpr (std::is_same_v<T, PrecisionTraits>) {
          return t.dtype == s.training.precision && t.recipe == s.training.fp8.recipe;
        }
        if constexpr (std::is_same_v<T, OffloadTraits>) return t.flavour == p.offload.flavour;
        if constexpr (std::is_same_v<T, TpCommOverlapTraits>) return t.id == p.tp_comm_overlap;
        if constexpr (std::is_same_v<T, AllocatorTraits>) {
          return t.id == s.training.allocator_kind();
        }
        return false;
      },
      e.traits);
}

}  // namespace

std::string ParameterSpec::legal_values() const {
  if (!choices.empty()) {
    std::string out;
    for (const auto& c : choices) out += (out.empty() ? "" : ", ") + c;
    return out;
  }
  if (is_whole_number()) return fmt::format("{} to {}", min, max);
  return range_text;
}

const std::vector<Entry>& registry_entries() {
  static const std::vector<Entry> entries = build_entries();
  return entries;
}

const KindInfo& kind_info(EntryKind kind) {
  for (const auto& k : kinds()) {
    if (k.kind == kind) return k;
  }
  throw std::logic_error("registry: a kind without its KindInfo");
}

std::vector<const Entry*> entries_of(EntryKind kind) {
  std::vector<const Entry*> out;
  for (const auto& e : registry_entries()) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

const Entry* find_entry(EntryKind kind, std::string_view name) {
  for (const auto& e : registry_entries()) {
    if (e.kind == kind && e.name == name) return &e;
  }
  return nullptr;
}

const Entry* find_entry_by_value(EntryKind kind, std::string_view value) {
  for (const auto& e : registry_entries()) {
    if (e.kind == kind && e.value == value) return &e;
  }
  return nullptr;
}

std::vector<std::string> scenario_values(EntryKind kind) {
  std::vector<std::string> out;
  for (const Entry* e : entries_of(kind)) {
    if (std::find(out.begin(), out.end(), e->value) == out.end()) out.push_back(e->value);
  }
  return out;
}

std::vector<std::string> entry_names(EntryKind kind) {
  std::vector<std::string> out;
  for (const Entry* e : entries_of(kind)) out.push_back(e->name);
  return out;
}

const Entry* chosen_entry(EntryKind kind, const Scenario& scenario) {
  for (const auto& e : registry_entries()) {
    if (e.kind == kind && chooses(e, scenario)) return &e;
  }
  return nullptr;
}

// Indexed by the enum's value: the schedule's traits are read per item while building.
const Entry& schedule_entry(PipelineSchedule s) {
  static const std::vector<const Entry*> by_id = [] {
    std::vector<const Entry*> out;
    for (const auto& e : registry_entries()) {
      if (const auto* t = std::get_if<ScheduleTraits>(&e.traits)) {
        const auto i = static_cast<std::size_t>(t->id);
        if (out.size() <= i) out.resize(i + 1, nullptr);
        out[i] = &e;
      }
    }
    return out;
  }();
  const auto i = static_cast<std::size_t>(s);
  if (i >= by_id.size() || by_id[i] == nullptr) {
    throw std::logic_error("registry: a pipeline schedule without its entry");
  }
  return *by_id[i];
}

const ScheduleTraits& schedule_traits(PipelineSchedule s) {
  return std::get<ScheduleTraits>(schedule_entry(s).traits);
}

const PlacementTraits& placement_traits(TpPlacement p) {
  for (const auto& e : registry_entries()) {
    if (const auto* t = std::get_if<PlacementTraits>(&e.traits); t != nullptr && t->id == p) {
      return *t;
    }
  }
  throw std::logic_error("registry: a tensor-parallel placement without its entry");
}

const ParameterSpec& registered_parameter(std::string_view path) {
  for (const auto& k : kinds()) {
    for (const auto& p : k.shared_parameters) {
      if (p.path == path) return p;
    }
  }
  for (const auto& e : registry_entries()) {
    for (const auto& p : e.parameters) {
      if (p.path == path) return p;
    }
  }
  throw std::logic_error("registry: no parameter at " + std::string(path));
}

void check_entry_rules(const Scenario& scenario, cost::Diagnostics& d) {
  for (EntryKind kind : kAllEntryKinds) {
    const Entry* chosen = chosen_entry(kind, scenario);
    if (chosen != nullptr) {
      for (Rule rule : chosen->rules) rule(scenario, d);
    }
    std::set<std::string> seen;
    for (const Entry* e : entries_of(kind)) {
      for (const auto& p : e->parameters) {
        if (p.when_not_taken == nullptr || !seen.insert(p.path).second) continue;
        const bool taken = chosen != nullptr &&
                           std::any_of(chosen->parameters.begin(), chosen->parameters.end(),
                                       [&p](const ParameterSpec& q) { return q.path == p.path; });
        if (!taken) p.when_not_taken(scenario, d);
      }
    }
  }
}

}  // namespace parasim::strat
