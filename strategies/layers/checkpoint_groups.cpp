#include "strategies/layers/checkpoint_groups.hpp"

#include <algorithm>

namespace parasim::strat {

bool grouped_recompute(const TrainingSpec& training) {
  // every-nth 1 checkpoints every layer alone: plain full, as uniform 1.
  return training.recompute == cost::Recompute::kFull &&
         (training.recompute_method == cost::RecomputeMethod::kBlock ||
          training.recompute_num_layers > 1);
}

bool has_plain_layers(const TrainingSpec& training) {
  return grouped_recompute(training) &&
         training.recompute_method != cost::RecomputeMethod::kUniform;
}

std::vector<LayerCheckpoint> stage_checkpoints(const TrainingSpec& training, int layers) {
  std::vector<LayerCheckpoint> out(static_cast<std::size_t>(std::max(layers, 0)));
  if (training.recompute != cost::Recompute::kFull) return out;
  const int n = std::max(training.recompute_num_layers, 1);
  if (training.recompute_method == cost::RecomputeMethod::kEveryNth) {
    for (int l = n - 1; l < layers; l += n) {  // 1-based counts n, 2n, ...
      LayerCheckpoint& one = out[static_cast<std::size_t>(l)];
      one.checkpointed = one.keeps_input = true;
      one.group_size = 1;
    }
    return out;
  }
  const bool block = training.recompute_method == cost::RecomputeMethod::kBlock;
  // uniform: groups of n from the first layer, the last one clipped; block: the first n alone.
  const int group = block ? 1 : n;
  const int checkpointed = block ? std::min(n, layers) : layers;
  for (int first = 0; first < checkpointed; first += group) {
    const int last = std::min(first + group, checkpointed) - 1;
    for (int l = first; l <= last; ++l) out[static_cast<std::size_t>(l)].checkpointed = true;
    out[static_cast<std::size_t>(first)].keeps_input = true;
    out[static_cast<std::size_t>(last)].group_size = last - first + 1;
  }
  return out;
}

LayerActivation layer_activation(const LayerCheckpoint& layer, const CheckpointBytes& bytes) {
  if (!layer.checkpointed) return {bytes.plain, 0.0};
  if (layer.keeps_input) return {bytes.input, bytes.full - bytes.input};
  return {0.0, bytes.full};
}

double stage_kept_bytes(const std::vector<LayerCheckpoint>& layers, const CheckpointBytes& bytes) {
  double sum = 0;
  for (const LayerCheckpoint& l : layers) sum += layer_activation(l, bytes).kept;
  return sum;
}

double stage_recompute_peak(const std::vector<LayerCheckpoint>& layers,
                            const CheckpointBytes& bytes) {
  double peak = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const int n = layers[i].group_size;
    if (n == 0) continue;
    double group = 0;
    for (std::size_t j = i + 1 - static_cast<std::size_t>(n); j <= i; ++j) {
      group += layer_activation(layers[j], bytes).rerun;
    }
    peak = std::max(peak, group);
  }
  return peak;
}

int rerun_layers(const std::vector<LayerCheckpoint>& layers) {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [](const LayerCheckpoint& l) { return l.checkpointed; }));
}

Scenario without_recompute(const Scenario& scenario) {
  Scenario s = scenario;
  s.training.recompute = cost::Recompute::kNone;
  s.training.recompute_method = cost::RecomputeMethod::kUniform;
  s.training.recompute_num_layers = 1;
  return s;
}

RerunSplit split_rerun(const std::vector<LayerStep>& backward) {
  RerunSplit out;
  std::size_t i = 0;
  while (i < backward.size() && backward[i].recompute) out.rerun.push_back(backward[i++]);
  out.rest.assign(backward.begin() + static_cast<std::ptrdiff_t>(i), backward.end());
  return out;
}

}  // namespace parasim::strat
