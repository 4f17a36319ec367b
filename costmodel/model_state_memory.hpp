#pragma once
// parasim::cost model-state memory — weights, gradients and optimizer state one GPU holds.
//
// Source: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", SC 2020, arXiv:1910.02054, section 3.1 and Figure 1. Mixed-precision AdamW keeps, per
// parameter: 16-bit weights 2 B, 16-bit gradients 2 B, and optimizer state K = 12 B (fp32 master
// weights, momentum and variance, 4 B each): 16 B/param. Pure fp32 training: weights 4 B,
// gradients 4 B, optimizer 8 B (momentum and variance; the weights are their own master copy).
//
// ZeRO stages over a data-parallel group of size Nd (the paper's Pos, Pos+g, Pos+g+p):
//   stage 0: nothing sharded                     (2 + 2 + K) * Psi
//   stage 1: optimizer state / Nd                2*Psi + 2*Psi + K*Psi/Nd
//   stage 2: optimizer state and gradients / Nd  2*Psi + (2 + K)*Psi/Nd
//   stage 3: everything / Nd                     (2 + 2 + K)*Psi/Nd
// Psi is the parameter count this GPU is responsible for after tensor and pipeline sharding.
//
// fp32_gradients: Megatron-LM with bf16 accumulates (and reduces) gradients in an fp32 main-grad
// buffer, 4 B/param instead of 2: 2 + 4 + 12 = 18 B/param (Megatron-LM's distributed-optimizer
// guide, "bf16 param, fp32 grads: 18 bytes"); ignored in pure fp32 training.
// Not modelled (callers add them): temporary buffers, fragmentation, and ZeRO-3's gathered
// parameters of the layer in flight.

#include "costmodel/units.hpp"

namespace parasim::cost {

struct ModelStateBytes {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;

  Bytes total() const { return weights + gradients + optimizer; }
};

// Per-GPU model state for `parameters` (after TP/PP sharding; a count, double so that averages
// over stages can be passed), data-parallel size `dp` >= 1, ZeRO `zero_stage` 0..3. Throws
// std::invalid_argument when parameters < 0, dp < 1 or the stage is out of range.
ModelStateBytes model_state_bytes(double parameters, int dp, int zero_stage, bool mixed_precision,
                                  bool fp32_gradients = false);

}  // namespace parasim::cost
