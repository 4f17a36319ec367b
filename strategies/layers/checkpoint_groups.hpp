#pragma once
// parasim::strat checkpoint groups — which layers of a (virtual) pipeline stage Megatron's
// `--recompute-granularity full` checkpoints, how they are grouped, and what each keeps and
// brings back, per micro-batch and GPU. One truth for the workload builder
// (pipeline_emission.cpp) and the planner's screen (planner/screen.cpp).
//
// Source: megatron-core 0.19.2, megatron/core/recompute.py, checkpointed_forward (called by
// TransformerBlock.forward; its layers are the block's local ones, num_layers_per_pipeline_rank =
// len(self.layers), transformer_block.py: a pipeline rank's, or one model chunk's under
// interleaving):
//   uniform: `while layer_idx < self.num_layers_per_pipeline_rank`, each chunk_runner checkpoints
//     layers [layer_idx, layer_idx + recompute_num_layers) (the end clipped by
//     `min(self.num_layers_per_pipeline_rank, ...)`, so the last group may be shorter) as ONE
//     tensor_parallel.checkpoint (or te_checkpoint) call: its forward runs under no_grad and
//     keeps only the group's input hidden_states; its backward (tensor_parallel/random.py,
//     CheckpointFunction.backward) reruns the whole group's forward with autograd, then one
//     torch.autograd.backward over it, so every layer of the group has its activations back when
//     the group's backward starts (autograd frees each layer's as its backward passes).
//   block: `for layer_idx in range(self.num_layers_per_pipeline_rank)`: layer_idx <
//     recompute_num_layers is checkpointed on its own (a one-layer group), the others run
//     normally and keep all their activations. Not modelled: under FP8/FP4 the first layers whose
//     input needs no gradient are skipped (recompute_skip_num_layers) and the window moves past
//     them; the scenario's rules refuse FP8 with grouped recompute.
// With uniform and recompute_num_layers 1 every layer is its own group: parasim's plain "full"
// (layer_program.cpp), which keeps its own code path.
// every-nth: torchtitan 0.2.2's layer selective AC (torchtitan/distributed/activation_checkpoint.py,
//   _apply_layer_sac: a per-process counter over the blocks apply_ac wraps, 1-based; a block whose
//   count is a multiple of N gets ptd_checkpoint_wrapper alone, the others none): on a rank
//   running one model chunk, its local layers N, 2N, ... (1-based) checkpointed one by one, the
//   others without recompute. The rules refuse it with interleaved chunks (the counter runs on
//   across a rank's chunks).

#include <vector>

#include "strategies/input/scenario.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

// One local layer of a (virtual) stage.
struct LayerCheckpoint {
  bool checkpointed = false;  // forward under no_grad, rerun inside the backward
  bool keeps_input = false;   // first layer of its group: the group's input kept to the backward
  int group_size = 0;         // on a group's last layer (whose backward runs first): the group's
                              // layer count, rerun in forward order before it; 0 elsewhere
};

// Whether the scenario's recompute is full with groups other than one layer each (method block,
// every-nth or uniform with recompute_num_layers > 1; every-nth 1 and uniform 1 are plain full):
// the builder and the screen then take the per-stage path below.
bool grouped_recompute(const TrainingSpec& training);
// Whether some layers run without recompute (block, every-nth): the builder and the screen then
// also build the program without recompute for them.
bool has_plain_layers(const TrainingSpec& training);

// The `layers` local layers of one (virtual) stage, first to last, under the scenario's
// recompute (without "full": none checkpointed).
std::vector<LayerCheckpoint> stage_checkpoints(const TrainingSpec& training, int layers);

// One layer's activation bytes (per micro-batch, per GPU) under full recompute and without it:
// `input` what a checkpoint keeps (the layer input, activation_bytes_per_layer's kFull), `full`
// every tensor the layer's backward reads (LayerProgram::activation_full_bytes), `plain` what a
// layer without recompute keeps (LayerProgram::activation_stored_bytes of that program).
struct CheckpointBytes {
  double input = 0, full = 0, plain = 0;
};
// What a layer allocates: `kept` at its forward, freed after its backward; `rerun` when its
// group's recompute reruns it, freed after its backward. A group's first layer keeps `input` and
// reruns full - input (its input is the kept tensor); the others keep nothing and rerun `full`
// (their input is the previous layer's recomputed output); a plain layer keeps `plain`.
struct LayerActivation {
  double kept = 0, rerun = 0;
};
LayerActivation layer_activation(const LayerCheckpoint& layer, const CheckpointBytes& bytes);
// Sum of `kept` over the stage's layers: what one micro-batch's forward leaves for its backward.
double stage_kept_bytes(const std::vector<LayerCheckpoint>& layers, const CheckpointBytes& bytes);
// The largest sum of `rerun` over one group: what a group's recompute adds at its peak (the
// group's rerun done, its backward not started): uniform N gives N full - input.
double stage_recompute_peak(const std::vector<LayerCheckpoint>& layers,
                            const CheckpointBytes& bytes);
// Layers of the stage whose forward is rerun (for executed FLOPs).
int rerun_layers(const std::vector<LayerCheckpoint>& layers);

// What block's layers past the first recompute_num_layers run: the scenario without recompute.
Scenario without_recompute(const Scenario& scenario);
// A checkpointed layer's backward list (LayerProgram::backward, its rerun forward first) split
// into the rerun steps (LayerStep::recompute), which the group's recompute issues, and the rest,
// the layer's own backward.
struct RerunSplit {
  std::vector<LayerStep> rerun, rest;
};
RerunSplit split_rerun(const std::vector<LayerStep>& backward);

}  // namespace parasim::strat
