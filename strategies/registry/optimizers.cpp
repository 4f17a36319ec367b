// Optimizer implementations: AdamW; Distributed Shampoo (Shi et al. 2023, arXiv 2309.06497);
// DASH with per-layer or per-GPU stacks (arXiv 2602.02016).
#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

ParameterSpec whole(const std::string& key, const std::string& default_value, std::int64_t min,
                    std::int64_t max, const std::string& meaning) {
  ParameterSpec p;
  p.path = "/optimizer/" + key;
  p.default_value = default_value;
  p.min = min;
  p.max = max;
  p.meaning = meaning;
  return p;
}

ParameterSpec named(const std::string& key, const std::string& default_value,
                    std::vector<std::string> choices, const std::string& meaning) {
  ParameterSpec p;
  p.path = "/optimizer/" + key;
  p.default_value = default_value;
  p.choices = std::move(choices);
  p.meaning = meaning;
  return p;
}

// The parameters of Shampoo and DASH (their solvers: docs/inverse-roots.md), with the defaults
// of each implementation.
std::vector<ParameterSpec> shampoo_parameters(const std::string& solver,
                                              const std::string& stacking) {
  ParameterSpec tf32;
  tf32.path = "/optimizer/allow_tf32";
  tf32.default_value = "false";
  tf32.range_text = "true or false";
  tf32.meaning = "fp32 matmuls on TF32 tensor cores (PyTorch's allow_tf32)";
  ParameterSpec host;
  host.path = "/optimizer/host_op_overhead";
  host.unit = "s";
  host.default_value = "6 us";
  host.range_text = "0 s to the per-event limit";
  host.meaning = "host time of the eager loop per operation besides the CUDA launch";
  return {whole("block_size", "1024", 16, 1 << 16, "max_preconditioner_dim"),
          whole("precondition_frequency", "1", 1, 1 << 20, "inverse roots every f steps"),
          named("solver", solver, {"evd", "coupled-newton", "newton-db", "chebyshev"},
                "inverse 4th-root solver"),
          whole("iterations", "10", 1, 1000, "Newton iterations (per run for Newton-DB)"),
          whole("chebyshev_degree", "60", 2, 1000, "Chebyshev polynomial degree"),
          named("scaling", "frobenius", {"frobenius", "power-iteration"},
                "how the factor is scaled before the iteration"),
          named("precision", "fp32", {"fp32", "fp16", "bf16"}, "the solver's matmul precision"),
          named("grafting", "adam", {"adam"}, "the step size grafted from Adam"),
          named("stacking", stacking, {"none", "layer", "gpu"},
                "none: block by block; layer or gpu: DASH's 3-D stacks"),
          tf32,
          host};
}

Entry optimizer(const std::string& name, const std::string& value, OptimizerKind kind,
                Stacking stacking) {
  Entry e;
  e.kind = EntryKind::kOptimizer;
  e.name = name;
  e.value = value;
  e.traits = OptimizerTraits{.kind = kind, .stacking = stacking};
  return e;
}

}  // namespace

std::vector<Entry> optimizer_entries() {
  Entry adamw = optimizer("adamw", "adamw", OptimizerKind::kAdamW, Stacking::kNone);
  adamw.description = "memory-bound step over the parameters a GPU owns: fp32 master weights "
                      "and two moments (30 bytes moved per parameter in mixed precision)";
  adamw.paper = "Loshchilov & Hutter 2019, arXiv 1711.05101; Micikevicius et al. 2018, arXiv "
                "1710.03740";
  adamw.builder = "optimizer_adamw.hpp: adamw_step_time";

  Entry shampoo = optimizer("shampoo", "shampoo", OptimizerKind::kShampoo, Stacking::kNone);
  shampoo.description = "Distributed Shampoo: L, R factors per block of at most B x B, inverse "
                        "4th roots every f steps (EVD, coupled Newton, Newton-DB, Chebyshev), "
                        "Adam grafting, blocks spread over data-parallel ranks and updates "
                        "all-gathered; one kernel per block and matmul";
  shampoo.paper = "Shi et al. 2023, arXiv 2309.06497";
  shampoo.parameters = shampoo_parameters("coupled-newton", "none");
  shampoo.builder = "optimizer_shampoo.cpp: shampoo_step_cost";

  Entry layer = optimizer("dash-layer", "dash", OptimizerKind::kDash, Stacking::kLayer);
  layer.description = "DASH (DashLayerwise): Shampoo with the blocks of one layer stacked into "
                      "3-D tensors for batched kernels, Newton-DB or Chebyshev roots, "
                      "power-iteration scaling";
  layer.paper = "DASH 2026, arXiv 2602.02016";
  layer.parameters = shampoo_parameters("newton-db", "layer");
  layer.builder = "optimizer_shampoo.cpp: shampoo_step_cost";

  Entry gpu = optimizer("dash-gpu", "dash", OptimizerKind::kDash, Stacking::kGpu);
  gpu.description = "DASH (DashGpu): every block of a GPU in one stack per block size";
  gpu.paper = "DASH 2026, arXiv 2602.02016";
  gpu.parameters = shampoo_parameters("newton-db", "gpu");
  gpu.builder = "optimizer_shampoo.cpp: shampoo_step_cost";
  return {adamw, shampoo, layer, gpu};
}

}  // namespace parasim::strat
