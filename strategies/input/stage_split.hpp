#pragma once
// parasim::strat stage splits — how a model's layers fall on the pipeline stages when they are
// not all alike: Megatron-LM's first and last stage counts (megatron-core 0.19.2
// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers; transformer_block.py
// get_transformer_layer_offset: the given edge stages hold their counts, every other stage the
// same share of the rest), and the balanced edge split the planner searches when pp does not
// divide the layers, as Llama 3 trained 126 layers on 16 stages with fewer on the first and the
// last (Llama 3 paper, arXiv 2407.21783, section 3.3.2; 7 + 14 x 8 + 7). Pure functions: the
// scenario parser (stage_layers_json.cpp) and the planner (planner/candidate.cpp) both split here.

#include <optional>
#include <vector>

namespace parasim::strat {

// Megatron's split of `layers` over `pp` stages with the first and/or last stage's own count
// (nullopt: that edge takes the even share). Empty when the other stages cannot share the rest
// evenly with at least one layer each (or pp < 2).
std::vector<int> edge_stage_layers(int layers, int pp, std::optional<int> first,
                                   std::optional<int> last);

// The balanced edge split: every middle stage ceil(layers / pp) layers, the rest on the first
// and the last (the first taking the odd layer, the last holding the head), each at least one
// and at most the middle share. Empty when there is none (pp < 2, or pp too large for the
// layers). Even stages when pp divides the layers.
std::vector<int> balanced_edge_split(int layers, int pp);

}  // namespace parasim::strat
