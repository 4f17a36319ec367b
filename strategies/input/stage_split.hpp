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

// Several chunks per stage when pp x chunks does not divide the layers (what `compare` uses
// when it switches a scenario to a multi-chunk schedule; torchtitan's own uneven split counts
// the embedding and the output as layers, the Zero Bubble fork pads): each stage the same share
// (layers / pp; the remainder, one each, on the stages after the first), and within a stage
// its chunks as even as possible, the earlier chunks taking the extra. Per virtual stage in
// `virtual_stage(stage, chunk)` order (a function of the schedule's placement, so that V and loop
// both read it). Empty when some virtual stage would get no layer.
template <typename VirtualStage>
std::vector<int> balanced_chunk_split(int layers, int pp, int chunks, VirtualStage virtual_stage) {
  const int virtual_stages = pp * chunks;
  if (pp < 1 || chunks < 1 || layers < virtual_stages) return {};
  std::vector<int> out(static_cast<std::size_t>(virtual_stages), 0);
  const int share = layers / pp, extra = layers % pp;
  for (int s = 0; s < pp; ++s) {
    const int on_stage = share + (s >= 1 && s <= extra ? 1 : 0);
    for (int c = 0; c < chunks; ++c) {
      out[static_cast<std::size_t>(virtual_stage(s, c))] =
          on_stage / chunks + (c < on_stage % chunks ? 1 : 0);
    }
  }
  for (int n : out) {
    if (n < 1) return {};
  }
  return out;
}

}  // namespace parasim::strat
