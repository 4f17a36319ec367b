#pragma once
// parasim::strat megatron_buckets — the gradient buckets megatron-core's DistributedDataParallel
// builds for one pipeline stage (parallel.dp_bucket_layout "megatron"), read at megatron-core
// 0.19.2 (the PyPI wheel):
//  - training/training.py resolve_ddp_bucket_size (pretrain sets it before the DDP wrapper, whose
//    own default distributed_data_parallel.py __init__ then does not apply): bucket_size defaults
//    to max(40,000,000, 1,000,000 x dp x cp) elements (the dp-cp group's size); it is
//    None (one bucket per buffer) without --overlap-grad-reduce, and None on every pipeline
//    stage but the first ("data-parallel communication on these stages is not on the critical
//    path").
//  - param_and_grad_buffer.py _compute_default_per_buffer_param_layout (no distributed
//    optimizer): parameters in reverse registration order (the order the backward produces
//    their gradients), a bucket closed as soon as it holds at least bucket_size elements; no
//    padding.
//  - optimizer/distrib_optimizer.py _compute_per_buffer_param_layout (--use-distributed-optimizer,
//    zero_stage 1): each parameter's start padded to a multiple of 64 elements
//    (param_layout.py pad_param_start), each bucket's end to a multiple of lcm(dp x cp, 128)
//    (pad_bucket_end), and a parameter marked shared_embedding (the word table tied to the
//    output head with pp > 1, on the first and on the last stage:
//    language_module.py setup_embeddings_and_output_layer) in a bucket of its own.
// Registration order (gpt_model.py): the embedding (word table, learned positions), the layers
// (each in layer_module_tensors_per_tp_rank's order), the final norm, the output layer's own
// table. The reduce-scatter (all-reduce without the distributed optimizer) of a bucket is
// launched once its last gradient is produced: here at the end of the backward of the layer
// (chunk) that holds it, a bound late by at most part of one layer's backward.
// Units: elements per tensor-parallel rank.

#include <cstddef>
#include <vector>

#include "strategies/input/scenario.hpp"

namespace parasim::strat {

struct MegatronTensor {
  double elements = 0;
  bool shared_embedding = false;  // its own bucket with the distributed optimizer
};

// One bucket: the last chunk (in backward order) holding one of its tensors, which is the chunk
// whose backward completes it and, in the forward, the first chunk that uses it; its elements
// with the interior alignment (Megatron's numel_unpadded) and with the end padding (what the
// collective moves).
struct GradBucket {
  std::size_t chunk = 0;
  double elements = 0;
  double padded = 0;
};

// max(40M, 1M x dp_cp) elements, dp_cp the data-parallel group with context parallelism
// (training.py resolve_ddp_bucket_size).
double megatron_default_bucket_elements(int dp_cp);

// The stage's parameter tensors by chunk, in the order the backward produces them: the head
// (final norm and output table) on the last stage, its layers last to first, the embedding on the
// first stage (the builder's gradient-ready chunks). Dense models with one chunk per stage.
std::vector<std::vector<MegatronTensor>> megatron_stage_tensors(const Scenario& scenario,
                                                                int stage);

// Megatron's layout of `chunks`: buckets of at least `bucket_elements` (<= 0: one bucket), with
// the distributed optimizer's padding to lcm(`pad_world`, 128) when pad_world > 0.
std::vector<GradBucket> megatron_grad_buckets(
    const std::vector<std::vector<MegatronTensor>>& chunks, double bucket_elements, int pad_world);

// The bucket size `stage` gets: 0 (one bucket) on later stages and without
// gradient_reduction "overlapped" (--overlap-grad-reduce); else dp_bucket in gradients, or the
// default when dp_bucket is 0.
double megatron_bucket_elements(const Scenario& scenario, int stage);

// megatron_grad_buckets of the stage's tensors with the scenario's size and padding.
std::vector<GradBucket> megatron_stage_buckets(const Scenario& scenario, int stage);

}  // namespace parasim::strat
