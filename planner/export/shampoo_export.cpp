#include "planner/export/shampoo_export.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "planner/export/export_common.hpp"

namespace parasim::exporter {
namespace {

using Json = nlohmann::ordered_json;
using strat::OptimizerKind;
using strat::RootSolver;
using strat::Scenario;

Json call(const std::string& cls, Json kwargs = Json::object()) {
  return Json{{"class", cls}, {"kwargs", std::move(kwargs)}};
}

std::string dtype_expr(cost::Dtype d) {
  return d == cost::Dtype::kFp16   ? "torch.float16"
         : d == cost::Dtype::kBf16 ? "torch.bfloat16"
                                   : "torch.float32";
}

// Python for a value of the JSON form: calls, numbers, booleans, expressions.
std::string python(const Json& v, int indent) {
  if (v.is_object() && v.contains("class")) {
    const Json& kw = v["kwargs"];
    if (kw.empty()) return v["class"].get<std::string>() + "()";
    std::string pad(static_cast<std::size_t>(indent + 4), ' ');
    std::string out = v["class"].get<std::string>() + "(\n";
    for (const auto& [k, x] : kw.items()) out += pad + k + "=" + python(x, indent + 4) + ",\n";
    return out + std::string(static_cast<std::size_t>(indent), ' ') + ")";
  }
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void cover_rest(const Scenario& s, ExportContext& c) {
  const std::string why =
      "not an optimizer setting: --to megatron, deepspeed or torchtitan "
      "exports the model, training and parallel layout";
  c.unused("/model", why);
  c.unused("/training", why);
  c.unused("/cluster/nodes", why);
  c.unused("/cluster/gpus_per_node", why);
  c.unused("/cluster/gpus_per_host", why);
  const auto& p = s.parallel;
  c.unused("/parallel", why);
  if (s.replicas() > 1 && p.tp * p.pp * p.cp > 1) {
    c.cannot("/parallel/dp",
             fmt::format("the optimizer's data-parallel distribution beside tp x pp x cp = {} "
                         "(its distributor spreads blocks over every rank of the world)",
                         p.tp * p.pp * p.cp),
             "no export target", "a distributor over the whole world");
  }
  if (p.zero_stage > 0 && s.replicas() > 1) {
    c.cannot("/parallel/zero_stage",
             fmt::format("ZeRO stage {} under the optimizer (parasim costs the DDP "
                         "distributor: blocks spread over the data-parallel ranks, updates "
                         "all-gathered)",
                         p.zero_stage),
             "no export target as simulated", "the DDP distributor");
  }
}

Json distributed_shampoo(const Scenario& s, ExportContext& c) {
  const auto& o = s.optimizer;
  Json kw;
  kw["params"] = "model.parameters()";
  kw["max_preconditioner_dim"] = o.block_size;
  c.mapped("/optimizer/block_size", "max_preconditioner_dim");
  kw["precondition_frequency"] = o.precondition_frequency;
  c.mapped("/optimizer/precondition_frequency", "precondition_frequency");
  kw["grafting_config"] = call("AdamPreconditionerConfig");
  c.mapped("/optimizer/grafting", "grafting_config=AdamPreconditionerConfig()");
  Json root = call("CoupledNewtonConfig", Json{{"max_iterations", o.iterations}});
  switch (o.solver) {
    case RootSolver::kEvd:
      root = call("EigenConfig");
      c.mapped("/optimizer/solver", "EigenConfig");
      c.unused("/optimizer/iterations", "the EVD runs no iterations");
      c.unused("/optimizer/scaling", "the EVD needs no scaling");
      break;
    case RootSolver::kCoupledNewton:
      c.mapped("/optimizer/solver", "CoupledNewtonConfig");
      c.mapped("/optimizer/iterations", "CoupledNewtonConfig.max_iterations");
      break;
    case RootSolver::kNewtonDb:
    case RootSolver::kChebyshev:
      c.cannot("/optimizer/solver",
               fmt::format("the {} inverse-root solver", strat::root_solver_name(o.solver)),
               "dash (DashConfig.inv_root_method)", "CoupledNewtonConfig");
      c.part_of_refused("/optimizer/iterations", "part of the refused solver");
      break;
  }
  if (o.solver != RootSolver::kEvd) {
    if (o.scaling == strat::RootScaling::kPowerIteration) {
      c.cannot("/optimizer/scaling", "power-iteration scaling before the root",
               "dash (matrix_scaling_type)", "Frobenius scaling (coupled Newton's own)");
    } else {
      c.mapped("/optimizer/scaling", "Frobenius (coupled Newton's own)");
    }
  }
  if (o.solver == RootSolver::kChebyshev) {
    c.part_of_refused("/optimizer/chebyshev_degree", "part of the refused solver");
  } else {
    c.unused("/optimizer/chebyshev_degree", "no Chebyshev solver");
  }
  if (o.precision != cost::Dtype::kFp32) {
    c.cannot("/optimizer/precision",
             fmt::format("{} inverse-root matmuls", cost::dtype_name(o.precision)),
             "dash (DashConfig.matmul_dtype)", "fp32");
  } else {
    c.mapped("/optimizer/precision", "fp32 (Distributed Shampoo's)");
  }
  kw["preconditioner_config"] =
      call("RootInvShampooPreconditionerConfig", Json{{"amortized_computation_config", root}});
  c.mapped("/optimizer/stacking", "none: Distributed Shampoo processes blocks one by one");
  if (s.replicas() > 1) {
    kw["distributed_config"] =
        call("DDPDistributedConfig",
             Json{{"communication_dtype", "torch.float32"}, {"num_trainers_per_group", -1}});
  }
  c.mapped("/parallel/dp", s.replicas() > 1 ? "DDPDistributedConfig over the world"
                                            : "single device (the default)");
  c.note(
      "the scenario has no learning rate, betas, epsilon or weight decay: DistributedShampoo's "
      "defaults apply (lr 1e-2, betas (0.9, 1.0), epsilon 1e-12, weight_decay 0.0); set them");
  return call("DistributedShampoo", kw);
}

Json dash(const Scenario& s, ExportContext& c) {
  const auto& o = s.optimizer;
  Json cfg;
  cfg["block_size"] = o.block_size;
  c.mapped("/optimizer/block_size", "DashConfig.block_size");
  cfg["inv_root_freq"] = o.precondition_frequency;
  c.mapped("/optimizer/precondition_frequency", "DashConfig.inv_root_freq");
  const char* method = o.solver == RootSolver::kEvd             ? "EVD"
                       : o.solver == RootSolver::kCoupledNewton ? "CN"
                       : o.solver == RootSolver::kNewtonDb      ? "NDB"
                                                                : "CBSHV";
  cfg["inv_root_method"] = std::string("DashInverseRootMethodType.") + method;
  c.mapped("/optimizer/solver", "DashConfig.inv_root_method");
  if (o.solver == RootSolver::kCoupledNewton || o.solver == RootSolver::kNewtonDb) {
    cfg["newton_steps"] = o.iterations;
    c.mapped("/optimizer/iterations", "DashConfig.newton_steps");
  } else {
    c.unused("/optimizer/iterations", "no Newton iterations in this solver");
  }
  if (o.solver == RootSolver::kChebyshev) {
    cfg["cbshv_degree"] = o.chebyshev_degree;
    c.mapped("/optimizer/chebyshev_degree", "DashConfig.cbshv_degree");
  } else {
    c.unused("/optimizer/chebyshev_degree", "no Chebyshev solver");
  }
  cfg["matrix_scaling_type"] = o.scaling == strat::RootScaling::kPowerIteration
                                   ? "DashMatrixScalingType.POWER_ITER"
                                   : "DashMatrixScalingType.FRO";
  c.mapped("/optimizer/scaling", "DashConfig.matrix_scaling_type");
  cfg["matmul_dtype"] = dtype_expr(o.precision);
  c.mapped("/optimizer/precision", "DashConfig.matmul_dtype");
  cfg["grafting_type"] = "DashGraftingType.ADAM";
  c.mapped("/optimizer/grafting", "DashConfig.grafting_type");
  std::string cls = o.stacking == strat::Stacking::kGpu ? "DashGpu" : "DashLayerwise";
  if (o.stacking == strat::Stacking::kNone) {
    c.cannot("/optimizer/stacking", "DASH without stacking (blocks one by one)",
             "shampoo (Distributed Shampoo: \"name\": \"shampoo\")", "DashLayerwise");
  } else {
    c.mapped("/optimizer/stacking", cls);
  }
  c.mapped("/parallel/dp", "DASH's own distribution over the world's ranks");
  c.note(
      "the scenario has no learning rate or weight decay: DASH's training script defaults are "
      "written (src/config/config.py: --lr 1e-3, --weight_decay 0.1); set them");
  return call(cls, Json{{"param_groups", "model.parameters()"},
                        {"lr", 1e-3},
                        {"weight_decay", 0.1},
                        {"config", call("DashConfig", cfg)}});
}

}  // namespace

Rendered write_shampoo(const Scenario& s, const ExportOptions& o, ExportContext& c) {
  cover_not_trainer(s, c);
  cover_framework(s, c, Target::kShampoo);
  cover_rest(s, c);
  const auto& opt = s.optimizer;
  const bool is_dash = opt.kind == OptimizerKind::kDash;
  if (opt.kind == OptimizerKind::kAdamW) {
    c.cannot("/optimizer/name",
             "AdamW (the shampoo export writes Shampoo's or DASH's "
             "constructor)",
             "megatron, deepspeed, torchtitan",
             "DistributedShampoo with the scenario's Shampoo "
             "fields");
  } else {
    c.mapped("/optimizer/name", is_dash ? "DASH" : "DistributedShampoo");
  }
  Json top = is_dash ? dash(s, c) : distributed_shampoo(s, c);
  Json torch_settings = Json::object();
  if (opt.allow_tf32) torch_settings["torch.backends.cuda.matmul.allow_tf32"] = true;
  c.mapped("/optimizer/allow_tf32", "torch.backends.cuda.matmul.allow_tf32");
  if (o.json) {
    Json j{{"optimizer", top}, {"torch", torch_settings}};
    return {j.dump(2) + "\n", "", false, ""};
  }
  std::string py = "import torch\n";
  py += is_dash
            ? "from ista_daslab_optimizers import (\n    DashConfig, DashGpu, DashGraftingType, "
              "DashInverseRootMethodType, DashLayerwise,\n    DashMatrixScalingType,\n)\n"
            : "from distributed_shampoo import (\n    AdamPreconditionerConfig, "
              "CoupledNewtonConfig, DDPDistributedConfig, DistributedShampoo,\n    "
              "EigenConfig, RootInvShampooPreconditionerConfig,\n)\n";
  py += "\n";
  if (opt.allow_tf32) py += "torch.backends.cuda.matmul.allow_tf32 = True\n\n";
  py += "optimizer = " + python(top, 0) + "\n";
  return {py, "# ", true, ""};
}

}  // namespace parasim::exporter
