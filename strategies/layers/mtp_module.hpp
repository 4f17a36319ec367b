#pragma once
// Internal to strategies/layers: DeepSeek-V3's multi-token prediction modules (model.mtp_layers;
// DeepSeek-V3 technical report, arXiv 2412.19437, sec. 2.2; megatron-core 0.19.2
// MultiTokenPredictionBlock, --mtp-num-layers), run on the last pipeline stage with the output
// head, as Megatron places them. Module k, for one micro-batch on one tp rank:
//   forward   the shared embedding's lookup of the tokens shifted by k; RMSNorm of it and of the
//             previous depth's hidden states (the main model's output for k = 1); their
//             concatenation (2h wide); the 2h -> h projection, column-parallel over tp (with
//             sequence parallelism the concatenation is all-gathered first and the output split
//             back along the sequence); one transformer layer of the model's last layer's kind
//             (MoE for DeepSeek-V3); the shared output head and its loss (the head's program
//             again: final norm, logits, cross entropy).
//   backward  the head's, the layer's (its recompute included), the projection's two GEMMs, the
//             norms', the embedding rows' scatter-add into the shared table's gradient.
// Memory per module: the layer's kept activations, the projection's input (2h per token) and a
// second set of logits and loss inputs. Parameters (layer_program.hpp mtp_params_on_rank): two
// input norms, the projection 2h x h / tp, the module's final norm, the layer; the embedding and
// the head are the main model's, the last stage holding a copy of the embedding table when pp > 1
// (head_params_per_tp_rank). The loss weight (lambda) is not a cost.
// Not modelled: the embedding group's all-reduce of that copy's gradients with the first stage's
// (as for tied embeddings).
// Not modelled: Megatron's option to put the modules on a stage of their own
// (--mtp-standalone), and with sequence parallelism the split of the projection's output is a
// copy rather than Megatron's exact scatter.

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat::detail {

// Appends `scenario.model.mtp_layers` modules to `head` (its forward, backward, the zero-bubble
// split, model FLOPs and activation bytes). `head` must be the plain head's program.
void append_mtp_modules(const Scenario& scenario, const cost::CostModel& costs, LayerProgram& head);

}  // namespace parasim::strat::detail
