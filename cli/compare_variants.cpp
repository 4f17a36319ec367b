#include "cli/compare_variants.hpp"

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "cli/option_list.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/input/stage_split.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::cli {
namespace {

// The variant's scenario checked as a scenario file would be: what fails makes it not applicable.
CompareVariant checked(std::string label, std::string axis, strat::Scenario s,
                       const std::string& file, std::string layout = {}) {
  CompareVariant v{std::move(label), std::move(axis), std::move(layout), std::move(s), {}};
  cost::Diagnostics d(file);
  strat::check_scenario(v.scenario, d);
  v.not_applicable = d.problems();
  return v;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "NAME a, b; SOLVER ...": the optimizer specs' words, from the registry's entries and their
// parameters' choices and ranges.
std::string optimizer_spec_words() {
  std::vector<std::string> names;
  for (const strat::Entry* e : strat::entries_of(strat::EntryKind::kOptimizer)) {
    if (!e->parameters.empty()) names.push_back(e->name);  // adamw takes no spec fields
  }
  const auto& block = strat::registered_parameter("/optimizer/block_size");
  return fmt::format("NAME {}; SOLVER {}; PRECISION {}; BLOCK {} to {}; SCALING {}", joined(names),
                     joined(strat::registered_parameter("/optimizer/solver").choices),
                     joined(strat::registered_parameter("/optimizer/precision").choices), block.min,
                     block.max, joined(strat::registered_parameter("/optimizer/scaling").choices));
}

// NAME/SOLVER/PRECISION[/BLOCK[/SCALING]], NAME an optimizer entry: adamw, shampoo, dash-layer,
// dash-gpu.
std::optional<strat::Scenario> optimizer_variant(const strat::Scenario& base,
                                                 const std::string& spec, cost::Diagnostics& bad) {
  const std::vector<std::string> f = [&] {
    std::vector<std::string> parts;
    std::size_t from = 0;
    for (std::size_t slash; (slash = spec.find('/', from)) != std::string::npos; from = slash + 1) {
      parts.push_back(spec.substr(from, slash - from));
    }
    parts.push_back(spec.substr(from));
    return parts;
  }();
  strat::Scenario s = base;
  auto& opt = s.optimizer;
  bool ok = f.size() <= 5;
  const strat::Entry* entry = strat::find_entry(strat::EntryKind::kOptimizer, f[0]);
  if (entry != nullptr && entry->parameters.empty()) {  // adamw
    opt.kind = std::get<strat::OptimizerTraits>(entry->traits).kind;
    ok = ok && f.size() == 1;
  } else if (entry != nullptr) {
    opt.kind = std::get<strat::OptimizerTraits>(entry->traits).kind;
    opt.stacking = std::get<strat::OptimizerTraits>(entry->traits).stacking;
    if (f.size() > 1) {
      if (f[1] == "evd")
        opt.solver = strat::RootSolver::kEvd;
      else if (f[1] == "coupled-newton")
        opt.solver = strat::RootSolver::kCoupledNewton;
      else if (f[1] == "newton-db")
        opt.solver = strat::RootSolver::kNewtonDb;
      else if (f[1] == "chebyshev")
        opt.solver = strat::RootSolver::kChebyshev;
      else
        ok = false;
    }
    if (f.size() > 2) {
      if (f[2] == "fp32")
        opt.precision = cost::Dtype::kFp32;
      else if (f[2] == "fp16")
        opt.precision = cost::Dtype::kFp16;
      else if (f[2] == "bf16")
        opt.precision = cost::Dtype::kBf16;
      else
        ok = false;
    }
    if (f.size() > 3) {
      const auto& range = strat::registered_parameter("/optimizer/block_size");
      if (const auto block = parse_whole_number(f[3], range.min, range.max)) {
        opt.block_size = static_cast<int>(*block);
      } else {
        bad.add("/optimizer/block_size",
                whole_number_message("--optimizers", f[3], range.min, range.max,
                                     fmt::format("BLOCK of \"{}\", the preconditioner's largest "
                                                 "dimension",
                                                 spec)));
        return std::nullopt;
      }
    }
    if (f.size() > 4) {
      if (f[4] == "frobenius")
        opt.scaling = strat::RootScaling::kFrobenius;
      else if (f[4] == "power-iteration")
        opt.scaling = strat::RootScaling::kPowerIteration;
      else
        ok = false;
    }
  } else {
    ok = false;
  }
  if (!ok) {
    bad.add("/optimizer",
            fmt::format("--optimizers: \"{}\" is not adamw or NAME/SOLVER/PRECISION[/BLOCK["
                        "/SCALING]] ({})",
                        spec, optimizer_spec_words()));
    return std::nullopt;
  }
  return s;
}

// Layouts of one group of G = tp x cp GPUs: tsp (folded), tp (Megatron), cp (context
// parallel), tspN (TSP on D = N GPUs), tpNxspM (N-way TP with SP inside, M-way sequence
// sharding). A tspN or tpNxspM group of another size keeps the cluster: data parallelism
// becomes dp x G / (N x M) (TSP's "matched" TP+SP: 8-way TP and 2-way SP on 16 GPUs against
// TSP on 8, with half the replicas; the paper's D in {2, 4, 8}). A well-formed name whose group
// does not divide the GPUs of a stage gives a variant with that reason.
std::optional<CompareVariant> layout_variant(const strat::Scenario& base, const std::string& name,
                                             const std::string& file, cost::Diagnostics& bad) {
  const int g = base.parallel.tp * base.parallel.cp;
  const long long gpus = static_cast<long long>(g) * base.parallel.dp;
  strat::Scenario s = base;
  s.parallel.sequence_parallel = false;
  s.parallel.tp_placement = strat::TpPlacement::kMegatron;
  const std::string_view text(name);
  const auto degree = [](std::string_view t) { return parse_whole_number(t, 1, kMaxLayoutDegree); };
  std::optional<long long> tsp_d, mesh_t, mesh_m;
  const std::size_t x = text.find("xsp");
  if (text.size() > 3 && text.starts_with("tsp")) {
    tsp_d = degree(text.substr(3));
  } else if (text.starts_with("tp") && x != std::string_view::npos) {
    mesh_t = degree(text.substr(2, x - 2));
    mesh_m = degree(text.substr(x + 3));
  }
  long long group = g;
  if (name == "tsp") {
    s.parallel.tp = g, s.parallel.cp = 1;
    s.parallel.tp_placement = strat::TpPlacement::kTsp;
  } else if (name == "tp") {
    s.parallel.tp = g, s.parallel.cp = 1;
  } else if (name == "cp") {
    s.parallel.tp = 1, s.parallel.cp = g;
  } else if (tsp_d) {
    group = *tsp_d;
    s.parallel.tp = static_cast<int>(*tsp_d), s.parallel.cp = 1;
    s.parallel.tp_placement = strat::TpPlacement::kTsp;
  } else if (mesh_t && mesh_m) {
    group = *mesh_t * *mesh_m;
    s.parallel.tp = static_cast<int>(*mesh_t), s.parallel.cp = static_cast<int>(*mesh_m);
    s.parallel.sequence_parallel = *mesh_t > 1;
  } else {
    bad.add("/parallel",
            fmt::format("--layouts: \"{}\" is not tsp, tp, cp, tspN or tpNxspM with N (x M) "
                        "dividing the {} GPUs of each pipeline stage (dp {} x tp {} x cp {}), N "
                        "and M whole numbers from 1 to {}",
                        name, gpus, base.parallel.dp, base.parallel.tp, base.parallel.cp,
                        kMaxLayoutDegree));
    return std::nullopt;
  }
  if (gpus % group != 0) {
    CompareVariant v{name, "layout", name, std::move(s), {}};
    v.not_applicable.push_back(
        {"/parallel",
         fmt::format("a group of {} GPUs does not divide the {} GPUs of each pipeline stage (dp "
                     "{} x tp {} x cp {}): N (x M) must divide {}",
                     group, gpus, base.parallel.dp, base.parallel.tp, base.parallel.cp, gpus)});
    return v;
  }
  s.parallel.dp = static_cast<int>(gpus / group);
  // The scenario's head bucketing goes with the TSP layouts only.
  if (s.parallel.tp_placement != strat::TpPlacement::kTsp) s.parallel.tsp_kv_buckets = 1;
  return checked(name, "layout", std::move(s), file, name);
}

// Placements: megatron runs the dense model; vanilla and btp the low-rank one (the scenario's
// low_rank, or r = hidden/4 when it has none, BOOST's setting).
std::optional<CompareVariant> placement_variant(const strat::Scenario& base,
                                                const std::string& name, const std::string& file,
                                                cost::Diagnostics& bad) {
  strat::Scenario s = base;
  s.parallel.tsp_kv_buckets = 1;  // the placements compared are not TSP
  const strat::Entry* entry = strat::find_entry(strat::EntryKind::kTpPlacement, name);
  const auto* placement =
      entry != nullptr ? &std::get<strat::PlacementTraits>(entry->traits) : nullptr;
  if (placement == nullptr || placement->folds_sequence) {  // TSP is a layout (--layouts)
    std::vector<std::string> known;
    for (const strat::Entry* e : strat::entries_of(strat::EntryKind::kTpPlacement)) {
      if (!std::get<strat::PlacementTraits>(e->traits).folds_sequence) known.push_back(e->name);
    }
    bad.add("/parallel/tp_placement",
            fmt::format("--placements: unknown placement \"{}\" (known: {})", name, joined(known)));
    return std::nullopt;
  }
  s.parallel.tp_placement = placement->id;
  if (!placement->low_rank) {
    s.model.low_rank = {};
    s.parallel.lowrank_checkpointing = false;
  } else {
    if (!s.model.low_rank.enabled()) {
      s.model.low_rank.attn_rank = s.model.low_rank.mlp_rank = s.model.hidden / 4;
    }
    if (placement->id != strat::TpPlacement::kBtp) s.parallel.lowrank_checkpointing = false;
  }
  return checked(name, "placement", std::move(s), file);
}

std::optional<CompareVariant> schedule_variant(const strat::Scenario& base, const std::string& name,
                                               int chunks, const std::string& file,
                                               cost::Diagnostics& bad) {
  strat::Scenario s = base;
  if (!strat::schedule_from_name(name, &s.parallel.schedule)) {
    bad.add("/parallel/schedule",
            fmt::format("--schedules: unknown schedule \"{}\" (known: {})", name,
                        joined(strat::entry_names(strat::EntryKind::kSchedule))));
    return std::nullopt;
  }
  // Chunks: the V's two; the loop's (interleaved-1f1b, interleaved-zb) the scenario's when it
  // loops already with more than one, else --chunks; one for the rest.
  auto loops = [](strat::PipelineSchedule x) {
    return x == strat::PipelineSchedule::kInterleaved ||
           x == strat::PipelineSchedule::kInterleavedZb;
  };
  if (strat::places_chunks_in_v(s.parallel.schedule)) {
    s.parallel.chunks = strat::kVShapeChunks;
  } else if (loops(s.parallel.schedule)) {
    if (!loops(base.parallel.schedule) || s.parallel.chunks == 1) s.parallel.chunks = chunks;
  } else {
    s.parallel.chunks = 1;
  }
  if (s.parallel.schedule != strat::PipelineSchedule::kInterleaved) {
    s.parallel.microbatch_group = 0;  // interleaved-1f1b's own
  }
  if (s.parallel.chunks != base.parallel.chunks) {
    s.parallel.stage_layers.clear();
    // Layers that pp x chunks does not divide: each stage's share split over its chunks.
    // (one chunk: the balanced edge split, as the planner's uneven stages).
    const int layers = s.model.layers, pp = s.parallel.pp, v = s.parallel.chunks;
    if (v > 1 && layers % (pp * v) != 0) {
      s.parallel.stage_layers = strat::balanced_chunk_split(
          layers, pp, v, [&](int stage, int chunk) { return s.virtual_stage(stage, chunk); });
    } else if (v == 1 && layers % pp != 0) {
      s.parallel.stage_layers = strat::balanced_edge_split(layers, pp);
    }
  }
  if (s.parallel.schedule != strat::PipelineSchedule::kPaci) {
    s.parallel.paci_mode = strat::PaciMode::kPerf;
  }
  return checked(name, "schedule", std::move(s), file);
}

}  // namespace

CompareVariants compare_variants(const strat::Scenario& base, const CompareOptions& o) {
  cost::Diagnostics bad(o.scenario);
  CompareVariants out;
  auto add = [&](std::optional<CompareVariant> v) {
    if (v) out.variants.push_back(std::move(*v));
  };
  const bool other_axis = !o.placements.empty() || !o.layouts.empty() || !o.optimizers.empty() ||
                          !o.ep.empty() || !o.dispatchers.empty() || !o.precisions.empty() ||
                          !o.shardings.empty() || !o.cp_variants.empty() || !o.recomputes.empty() ||
                          !o.compiles.empty() || !o.tp_overlaps.empty();
  if (other_axis && !o.schedules.empty()) {
    bad.add("/parallel/schedule",
            "--schedules compares schedules and cannot be combined with --placements, --layouts, "
            "--optimizers, --ep, --dispatchers, --precisions, --shardings, --cp-variants, "
            "--tp-overlaps, --recomputes or --compiles (set the schedule in the scenario instead)");
  }
  // Context-parallel exchanges (docs/context-parallel.md): a2a+p2p keeps the scenario's
  // cp_a2a_size, the others drop it; a variant the rules refuse (cp 1, heads that do not split)
  // is a row saying why.
  for (const auto& name : split_list(o.cp_variants)) {
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kContextParallel, name);
    if (e == nullptr) {
      bad.add("/parallel/cp_variant",
              fmt::format("--cp-variants: unknown context-parallel variant \"{}\" (known: {})",
                          name, joined(strat::entry_names(strat::EntryKind::kContextParallel))));
      continue;
    }
    strat::Scenario s = base;
    s.parallel.cp_comm = std::get<strat::ContextParallelTraits>(e->traits).comm;
    if (s.parallel.cp_comm != strat::CpComm::kAllToAllP2p) s.parallel.cp_a2a_size = 0;
    add(checked(name, "cp", std::move(s), o.scenario));
  }
  // TP communication overlaps (docs/tp-overlap.md): a mode the rules refuse (no sequence
  // parallelism, tp 1, userbuffers outside Megatron-LM) is a row saying why.
  for (const auto& name : split_list(o.tp_overlaps)) {
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kTpCommOverlap, name);
    if (e == nullptr) {
      bad.add("/parallel/tp_comm_overlap",
              fmt::format("--tp-overlaps: unknown overlap \"{}\" (known: {})", name,
                          joined(strat::entry_names(strat::EntryKind::kTpCommOverlap))));
      continue;
    }
    strat::Scenario s = base;
    s.parallel.tp_comm_overlap = std::get<strat::TpCommOverlapTraits>(e->traits).id;
    add(checked(name, "tp overlap", std::move(s), o.scenario));
  }
  // Precisions: registry entry names; "fp8" alone is the scenario's recipe (delayed when it has
  // none); the scenario's FP8 options carried where the recipe takes them (fp8_with_recipe). A
  // recipe the device cannot run is a row saying why.
  for (const auto& name : split_list(o.precisions)) {
    const std::string full = name == "fp8" && !base.training.fp8.enabled() ? "fp8:delayed"
                             : name == "fp8" ? base.training.precision_name()
                                             : name;
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kPrecision, full);
    if (e == nullptr) {
      bad.add("/training/precision",
              fmt::format("--precisions: unknown precision \"{}\" (known: {}, or fp8 for the "
                          "scenario's recipe)",
                          name, joined(strat::entry_names(strat::EntryKind::kPrecision))));
      continue;
    }
    strat::Scenario s = base;
    const auto& traits = std::get<strat::PrecisionTraits>(e->traits);
    s.training.precision = traits.dtype;
    s.training.fp8 = strat::fp8_with_recipe(base.training.fp8, traits.recipe);
    if (traits.dtype == cost::Dtype::kFp32) s.training.fp32_gradients = false;
    add(checked(full, "precision", std::move(s), o.scenario));
  }
  // Experts: the scenario at each expert-parallel degree, or with each dispatcher; a degree the
  // scenario's rules refuse (ep must divide the experts and, with etp, the stage's GPUs) is a row
  // saying why.
  for (const auto& item : split_list(o.ep)) {
    if (const auto n = parse_whole_number(item, 1, kMaxEp)) {
      strat::Scenario s = base;
      s.parallel.ep = static_cast<int>(*n);
      add(checked(fmt::format("ep {}", *n), "ep", std::move(s), o.scenario));
    } else {
      bad.add("/parallel/ep",
              whole_number_message("--ep", item, 1, kMaxEp,
                                   "expert-parallel ranks, the range of parallel.ep"));
    }
  }
  // Recompute modes: registry names; selective keeps the scenario's recompute_modules when it
  // is selective already (Megatron's default, core_attn, otherwise). A mode the scenario's rules
  // refuse (per-op on a model torchtitan's policy is not modelled for) is a row saying why.
  for (const auto& name : split_list(o.recomputes)) {
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kRecompute, name);
    if (e == nullptr) {
      bad.add("/training/recompute",
              fmt::format("--recomputes: unknown recompute mode \"{}\" (known: {})", name,
                          joined(strat::entry_names(strat::EntryKind::kRecompute))));
      continue;
    }
    strat::Scenario s = base;
    s.training.recompute = std::get<cost::Recompute>(e->traits);
    if (s.training.recompute != cost::Recompute::kSelective) s.training.recompute_modules = {};
    if (s.training.recompute != cost::Recompute::kFull) {  // Megatron's method goes with full
      s.training.recompute_method = cost::RecomputeMethod::kUniform;
      s.training.recompute_num_layers = 1;
    }
    add(checked(name, "recompute", std::move(s), o.scenario));
  }
  // torch.compile off and on (training.framework.compile, its components kept); on needs
  // torchtitan's block, or the row says why.
  for (const auto& name : split_list(o.compiles)) {
    if (name != "off" && name != "on") {
      bad.add("/training/framework/compile",
              fmt::format("--compiles: unknown value \"{}\" (known: off, on)", name));
      continue;
    }
    strat::Scenario s = base;
    s.training.framework.compile.enabled = name == "on";
    add(checked("compile " + name, "compile", std::move(s), o.scenario));
  }
  for (const auto& name : split_list(o.dispatchers)) {
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kDispatcher, name);
    if (e == nullptr) {
      bad.add("/parallel/moe_dispatcher",
              fmt::format("--dispatchers: unknown dispatcher \"{}\" (known: {})", name,
                          joined(strat::entry_names(strat::EntryKind::kDispatcher))));
      continue;
    }
    strat::Scenario s = base;
    s.parallel.moe_dispatcher = std::get<strat::DispatcherTraits>(e->traits).id;
    add(checked(name, "dispatcher", std::move(s), o.scenario));
  }
  // Shardings: registry entry names; FSDP2 with the scenario's parallel.fsdp options, a ZeRO
  // stage without them. A sharding the scenario's rules refuse is a row saying why.
  for (const auto& name : split_list(o.shardings)) {
    const strat::Entry* e = strat::find_entry(strat::EntryKind::kSharding, name);
    if (e == nullptr) {
      bad.add("/parallel/sharding",
              fmt::format("--shardings: unknown sharding \"{}\" (known: {})", name,
                          joined(strat::entry_names(strat::EntryKind::kSharding))));
      continue;
    }
    strat::Scenario s = base;
    const auto& traits = std::get<strat::ShardingTraits>(e->traits);
    s.parallel.zero_stage = traits.zero_stage;
    s.parallel.fsdp2.enabled = traits.fsdp2;
    if (!traits.fsdp2) s.parallel.fsdp2 = strat::Fsdp2Spec{};
    add(checked(name, "sharding", std::move(s), o.scenario));
  }
  if (!o.seq_lens.empty() && o.layouts.empty()) {
    bad.add("/model/seq_len", "--seq-lens repeats the --layouts at other lengths: give --layouts");
  }
  const bool chunks_ok = o.chunks >= 1 && o.chunks <= kMaxChunks;
  if (!chunks_ok) {
    bad.add("/parallel/chunks", whole_number_message("--chunks", std::to_string(o.chunks), 1,
                                                     kMaxChunks, "model chunks per stage"));
  }
  for (const auto& spec : split_list(o.optimizers)) {
    if (auto s = optimizer_variant(base, spec, bad)) {
      add(checked(spec, "optimizer", std::move(*s), o.scenario));
    }
  }
  if (!o.layouts.empty()) {
    std::vector<CompareVariant> layouts;
    for (const auto& name : split_list(o.layouts)) {
      if (auto v = layout_variant(base, name, o.scenario, bad)) layouts.push_back(std::move(*v));
    }
    std::vector<int> lengths;
    for (const auto& item : split_list(o.seq_lens)) {
      if (const auto n = parse_whole_number(item, 1, kMaxSeqLen)) {
        lengths.push_back(static_cast<int>(*n));
      } else {
        bad.add("/model/seq_len", whole_number_message("--seq-lens", item, 1, kMaxSeqLen,
                                                       "tokens, the range of model.seq_len"));
      }
    }
    if (lengths.empty()) {
      for (auto& v : layouts) add(std::move(v));
    } else {
      for (int length : lengths) {
        for (const auto& layout : layouts) {
          strat::Scenario s = layout.scenario;
          s.model.seq_len = length;
          const std::string label = length % 1024 == 0
                                        ? fmt::format("{}@{}K", layout.layout, length / 1024)
                                        : fmt::format("{}@{}", layout.layout, length);
          CompareVariant v = checked(label, "layout", std::move(s), o.scenario, layout.layout);
          if (!layout.applies()) v.not_applicable = layout.not_applicable;
          add(std::move(v));
        }
      }
    }
  }
  for (const auto& name : split_list(o.placements)) {
    add(placement_variant(base, name, o.scenario, bad));
  }
  if (!other_axis) {
    std::string schedules = o.schedules;
    if (schedules.empty() && base.parallel.pp == 1) {
      schedules = strat::schedule_name(base.parallel.schedule);
      out.note = fmt::format(
          "pp 1: no pipeline to schedule, so only the scenario's schedule ({}) is run; name "
          "schedules with --schedules, or compare --placements, --layouts, --seq-lens or "
          "--optimizers",
          schedules);
    } else if (schedules.empty()) {
      schedules = kDefaultSchedules;
    }
    for (const auto& name : split_list(schedules)) {
      add(schedule_variant(base, name, chunks_ok ? o.chunks : 1, o.scenario, bad));
    }
    if (split_list(schedules).empty()) {
      bad.add("/parallel/schedule", "--schedules names nothing");
    }
  }
  if (other_axis && out.variants.empty() && bad.ok()) {
    bad.add("/parallel",
            "--placements, --layouts, --optimizers, --ep, --dispatchers, "
            "--precisions, --shardings, --cp-variants, --tp-overlaps, --recomputes or --compiles "
            "names nothing");
  }
  if (!bad.ok()) {
    add_not_applicable(out.variants, bad);  // every problem at once
    throw cost::InputError(std::move(bad));
  }
  return out;
}

void add_not_applicable(const std::vector<CompareVariant>& variants, cost::Diagnostics& d) {
  for (const auto& v : variants) {
    for (const auto& p : v.not_applicable) {
      // "with layout tsp", "with ep 2" (a label that names its axis already)
      const bool named = v.label.rfind(v.axis + " ", 0) == 0;
      d.add(p.json_path, named ? fmt::format("with {}: {}", v.label, p.message)
                               : fmt::format("with {} {}: {}", v.axis, v.label, p.message));
    }
  }
}

}  // namespace parasim::cli
