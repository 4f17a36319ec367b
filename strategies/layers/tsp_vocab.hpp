#pragma once
// parasim::strat TSP's input embedding and output head (Zyphra, arXiv
// 2604.26294): each of the D ranks holds ceil(V/D) rows of the vocabulary table (1/D of its
// parameters, gradients and optimizer state) and its own T = b s / D tokens, so the table shards
// travel the way the gated MLP's do: a ring of D steps.
//
// Embedding forward: at step j a rank looks up those of its tokens whose ids fall in the shard
// it holds, then passes the shard on (D - 1 sends of ceil(V/D) h elements). Backward: the row
// gradients of its tokens are added into the gradient of the shard it holds, and that gradient
// moves on after every step (D sends; the last one reaches the owner). The lookup needs no
// weights in the backward.
// Head forward: at step j the logits of the rank's tokens against shard j's rows (a [T x h] x
// [h x ceil(V/D)] GEMM) and their part of the softmax cross-entropy (running max and sum of
// exponentials in fp32); shard sends as above. Backward: the shards travel again (D - 1 sends)
// and each step's weight gradient moves on (D sends), like the MLP's.
// Per rank per step, bytes (e per element, k = (D-1)/D, R = ceil(V/D) h e): embedding forward
// (D-1) R, backward D R; head forward (D-1) R, backward (2D-1) R. Memory: the rank's logits
// (T x V, bf16 and fp32) as without TSP; the in-flight shard buffers (a few R: 33 MB each at
// V 32000, h 4096, D 8) are not counted.

#include "costmodel/cost_model.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

LayerProgram tsp_embedding_program(const Scenario& scenario, const cost::CostModel& costs);
LayerProgram tsp_head_program(const Scenario& scenario, const cost::CostModel& costs);

}  // namespace parasim::strat
