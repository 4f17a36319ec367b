// The names of a scenario's choices (scenario.hpp, model.hpp): each read from its registry entry
// where the choice is one, so that messages, reports and exports say what a scenario writes.
#include <fmt/format.h>

#include <string>

#include "strategies/input/scenario.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::strat {

const char* optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::kAdamW:
      return "adamw";
    case OptimizerKind::kShampoo:
      return "shampoo";
    case OptimizerKind::kDash:
      return "dash";
  }
  return "?";
}

const char* root_solver_name(RootSolver s) {
  switch (s) {
    case RootSolver::kEvd:
      return "evd";
    case RootSolver::kCoupledNewton:
      return "coupled-newton";
    case RootSolver::kNewtonDb:
      return "newton-db";
    case RootSolver::kChebyshev:
      return "chebyshev";
  }
  return "?";
}

const char* stacking_name(Stacking s) {
  switch (s) {
    case Stacking::kNone:
      return "none";
    case Stacking::kLayer:
      return "layer";
    case Stacking::kGpu:
      return "gpu";
  }
  return "?";
}

const char* tp_placement_name(TpPlacement p) {
  switch (p) {
    case TpPlacement::kMegatron:
      return "megatron";
    case TpPlacement::kVanilla:
      return "vanilla";
    case TpPlacement::kBtp:
      return "btp";
    case TpPlacement::kTsp:
      return "tsp";
  }
  return "?";
}

const char* fp8_format_name(Fp8Format f) {
  return f == Fp8Format::kE4m3 ? "e4m3" : "hybrid";
}

std::string TrainingSpec::precision_name() const {
  if (fp8.enabled()) return fmt::format("fp8:{}", cost::quant_recipe_name(fp8.recipe));
  return cost::dtype_name(precision);
}

const char* moe_dispatcher_name(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return "alltoall";
    case MoeDispatcher::kAllGather:
      return "allgather";
    case MoeDispatcher::kFlex:
      return "flex";
  }
  return "?";
}

const char* cp_comm_name(CpComm c) {
  for (const Entry* e : entries_of(EntryKind::kContextParallel)) {
    if (std::get<ContextParallelTraits>(e->traits).comm == c) return e->name.c_str();
  }
  return "?";
}

const char* tp_comm_overlap_name(TpCommOverlap o) {
  for (const Entry* e : entries_of(EntryKind::kTpCommOverlap)) {
    if (std::get<TpCommOverlapTraits>(e->traits).id == o) return e->name.c_str();
  }
  return "?";
}

const char* schedule_name(PipelineSchedule s) {
  return schedule_entry(s).name.c_str();
}

bool schedule_from_name(std::string_view name, PipelineSchedule* out) {
  const Entry* e = find_entry(EntryKind::kSchedule, name);
  if (e == nullptr) return false;
  *out = std::get<ScheduleTraits>(e->traits).id;
  return true;
}

}  // namespace parasim::strat
