#pragma once
// Internal to strategies/layers: the forward kernels a backward reruns under the recompute
// policies that rerun part of a dense layer (costmodel/activation_checkpointing.hpp says what
// each keeps). Full recompute reruns the whole forward and the attention core's selective
// recompute reruns inside attention_backward; these are the rest. Not a public header.

#include <vector>

#include "costmodel/activation_checkpointing.hpp"
#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// torchtitan's per-op selective AC (torchtitan/distributed/activation_checkpoint.py, 0.3.0 and
// 0.2.2): everything in parasim's dense forward except the saved ops' kernels, i.e. the wq, wv,
// w1 and w2 GEMMs (mms 1, 3, 5, 7; fc1 for GeLU), the SDPA kernel and the reduce-scatters. Rerun:
// the all-gathers (SP) or all-reduces (TP without SP), both norms, wk and wo (mms 2, 4), w3 (mm
// 6) or fc2, the activation and the residual adds.
void per_op_recompute(StepWriter& w, const Dims& x, std::vector<LayerStep>& out);

// Megatron's recompute modules other than core_attn (transformer_layer.py, megatron-core 0.19.2):
// "layernorm" reruns input_layernorm and pre_mlp_layernorm (CheckpointWithoutOutput); "mlp"
// reruns the dense MLP (tensor_parallel.checkpoint): fc1 with its sequence-parallel all-gather,
// the activation, fc2 with its reduce-scatter (all-reduce without SP). Nothing when neither is
// chosen.
void module_recompute(StepWriter& w, const Dims& x, const cost::RecomputeModules& modules,
                      std::vector<LayerStep>& out);

}  // namespace parasim::strat::detail
