#include "strategies/data_parallel/megatron_buckets.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {
namespace {

double round_up(double value, double divisor) {
  return std::ceil(value / divisor) * divisor;
}

}  // namespace

double megatron_default_bucket_elements(int dp) {
  return std::max(40'000'000.0, 1'000'000.0 * dp);
}

std::vector<std::vector<MegatronTensor>> megatron_stage_tensors(const Scenario& sc, int stage) {
  const ModelSpec& m = sc.model;
  const int tp = sc.parallel.tp;
  const double h = m.hidden;
  std::vector<std::vector<MegatronTensor>> chunks;
  if (stage == sc.head_stage()) {
    // Reverse of: final norm (weight, bias), the output layer's table (head_params_per_tp_rank).
    std::vector<MegatronTensor> head;
    if (!m.tied_embeddings || sc.head_stage() > 0) {
      head.push_back({static_cast<double>(m.vocab) * h / tp, m.tied_embeddings});
    }
    if (m.norm == NormKind::kLayerNorm) head.push_back({h});
    head.push_back({h});
    chunks.push_back(head);
  }
  std::vector<MegatronTensor> layer;
  for (const auto& module : layer_module_tensors_per_tp_rank(m, tp)) {
    for (double e : module) layer.push_back({e});
  }
  std::reverse(layer.begin(), layer.end());
  for (int l = 0; l < sc.stage_layer_count(stage); ++l) chunks.push_back(layer);
  if (stage == 0) {
    // Reverse of: word table (vocab-parallel), learned positions (replicated).
    std::vector<MegatronTensor> embedding;
    if (m.learned_positions) embedding.push_back({static_cast<double>(m.seq_len) * h});
    embedding.push_back(
        {static_cast<double>(m.vocab) * h / tp, m.tied_embeddings && sc.head_stage() > 0});
    chunks.push_back(embedding);
  }
  return chunks;
}

std::vector<GradBucket> megatron_grad_buckets(
    const std::vector<std::vector<MegatronTensor>>& chunks, double bucket_elements, int pad_world) {
  const bool distributed = pad_world > 0;
  // param_layout.py bucket_end_divisor without pad_buckets_for_high_nccl_busbw (default False).
  const double end_divisor = distributed ? static_cast<double>(std::lcm(pad_world, 128)) : 1.0;
  std::vector<GradBucket> out;
  double start = 0, bucket_start = 0, end = 0;
  std::size_t last_chunk = 0;
  bool open = false;
  auto finalize = [&](double param_end) {
    const double padded_end = distributed ? round_up(param_end, end_divisor) : param_end;
    out.push_back({last_chunk, param_end - bucket_start, padded_end - bucket_start});
    bucket_start = padded_end;
    start = bucket_start;
    open = false;
  };
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    for (const MegatronTensor& t : chunks[c]) {
      // The shared embedding's own bucket is the distributed optimizer's rule only.
      const bool own = distributed && t.shared_embedding;
      if (distributed) start = round_up(start, 64);
      if (own && open) finalize(start);
      end = start + t.elements;
      last_chunk = c;
      open = true;
      if ((bucket_elements > 0 && end - bucket_start >= bucket_elements) || own) {
        finalize(end);
      } else {
        start = end;
      }
    }
  }
  if (open) finalize(end);
  return out;
}

double megatron_bucket_elements(const Scenario& sc, int stage) {
  if (stage > 0) return 0;
  if (sc.training.framework.gradient_reduction != GradientReduction::kOverlapped) return 0;
  if (sc.parallel.dp_bucket.value > 0) {
    return std::round(sc.parallel.dp_bucket.value / sc.training.gradient_bytes());
  }
  return megatron_default_bucket_elements(sc.parallel.dp * sc.parallel.cp);  // the dp x cp group
}

std::vector<GradBucket> megatron_stage_buckets(const Scenario& sc, int stage) {
  const int pad_world = sc.parallel.zero_stage == 1 ? sc.parallel.dp * sc.parallel.cp : 0;
  return megatron_grad_buckets(megatron_stage_tensors(sc, stage),
                               megatron_bucket_elements(sc, stage), pad_world);
}

}  // namespace parasim::strat
