#include "strategies/layers/tsp_layer.hpp"

#include <fmt/format.h>

#include <string>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat {
namespace {

using namespace detail;

struct Tsp {
  double T, b, s, h, kvd, f, a, d, D, e;
  double B = 1;  // K/V buckets per round (parallel.tsp_kv_buckets)
  double act(double elements) const { return elements * e; }
  double attn_shard() const { return act((h * (h + 2 * kvd) + h * h) / D); }  // packed Q,K,V,O
  double mlp_shard() const { return act(3 * h * f / D); }                      // gate, up, down
  double kv_gathered() const { return act(2 * b * s * kvd / D / B); }           // one bucket
};

// One round's attention compute: Q, K, V for head shard r on the local tokens.
void qkv(StepWriter& w, const Tsp& z, bool backward) {
  if (backward) {
    w.gemm_backward(z.T, (z.h + 2 * z.kvd) / z.D, z.h);
  } else {
    w.gemm(z.T, (z.h + 2 * z.kvd) / z.D, z.h);
  }
}

// Local queries against every key of one K/V bucket of head shard r (FlashAttention, causal).
void attend(StepWriter& w, const Tsp& z, bool backward) {
  cost::AttentionShape shape;
  shape.heads = z.b * z.a / z.D / z.B;
  shape.seq_q = z.s / z.D;
  shape.seq_kv = z.s;
  shape.head_dim = z.d;
  w.flash_attention(shape, backward ? cost::FlashPass::kBackward : cost::FlashPass::kForward);
}

// The round's output through O's shard, accumulated locally.
void out_projection(StepWriter& w, const Tsp& z, bool backward) {
  if (backward) {
    w.gemm_backward(z.T, z.h, z.h / z.D);
  } else {
    w.gemm(z.T, z.h, z.h / z.D);
  }
}

void mlp_step(StepWriter& w, const Tsp& z, bool backward) {
  if (backward) {
    w.gemm_backward(z.T, z.h, z.f / z.D);
    w.memory(z.act(5 * z.T * z.f / z.D));
    w.gemm_backward(z.T, 2 * z.f / z.D, z.h);
  } else {
    w.gemm(z.T, 2 * z.f / z.D, z.h);
    w.memory(z.act(3 * z.T * z.f / z.D));
    w.gemm(z.T, z.h, z.f / z.D);
  }
}

void attention(StepWriter& w, const Tsp& z, bool backward, std::vector<LayerStep>& out) {
  w.memory(z.act((backward ? 3 : 2) * z.T * z.h));  // norm
  w.close(out, backward ? "attn norm bwd" : "attn norm");
  int compute = last_step(out), weights = compute, kv = compute;
  const int rounds = static_cast<int>(z.D);
  const std::string dir = backward ? " bwd" : "";
  for (int r = 0; r < rounds; ++r) {
    const std::string round = fmt::format(" {}", r);
    collective_after(out, "attn weights broadcast" + dir, CollectiveKind::kBroadcast, z.attn_shard(),
               StepGroup::kWeights, {weights});
    weights = last_step(out);
    const int buckets = static_cast<int>(z.B);
    auto bucket_label = [&](const char* what, int k) {
      return buckets == 1 ? what + round : fmt::format("{}{}.{}", what, round, k);
    };
    if (!backward) {
      qkv(w, z, false);
      close_after(w, out, "attn qkv" + round, {compute, weights});
      const int q = last_step(out);
      compute = q;
      // Double buffering: bucket k + 1's K/V arrive while k is attended, and bucket k's gather
      // waits until bucket k - 2 has been attended (its buffer is free again).
      std::vector<int> attended;
      for (int k = 0; k < buckets; ++k) {
        std::vector<int> gather_after{q, kv};
        if (k >= 2) gather_after.push_back(attended[static_cast<std::size_t>(k - 2)]);
        collective_after(out, "attn kv all-gather", CollectiveKind::kAllGather, z.kv_gathered(),
                         StepGroup::kTensorParallel, std::move(gather_after));
        kv = last_step(out);
        attend(w, z, false);
        if (k + 1 == buckets) out_projection(w, z, false);
        close_after(w, out, bucket_label("attn round", k), {compute, kv});
        compute = last_step(out);
        attended.push_back(compute);
      }
    } else {
      // The backward regathers each bucket's K/V, computes its gradients, then reduces its
      // dK/dV along the sequence; after the round, the weight-gradient shard goes to its owner.
      for (int k = 0; k < buckets; ++k) {
        collective_after(out, "attn kv all-gather bwd", CollectiveKind::kAllGather,
                         z.kv_gathered(), StepGroup::kTensorParallel, {kv});
        kv = last_step(out);
        if (k == 0) out_projection(w, z, true);
        attend(w, z, true);
        if (k + 1 == buckets) qkv(w, z, true);
        close_after(w, out, bucket_label("attn round bwd", k), {compute, weights, kv});
        compute = last_step(out);
        collective_after(out, "attn dkv reduce-scatter", CollectiveKind::kReduceScatter,
                         z.kv_gathered(), StepGroup::kTensorParallel, {compute});
        kv = last_step(out);
      }
      collective_after(out, "attn wgrad reduce", CollectiveKind::kBroadcast, z.attn_shard(),
                       StepGroup::kWeights, {compute, weights});
      weights = last_step(out);
    }
  }
  w.memory(z.act(3 * z.T * z.h));  // residual
  close_after(w, out, backward ? "attn out bwd" : "attn out", {compute, kv, weights});
}

void mlp(StepWriter& w, const Tsp& z, bool backward, std::vector<LayerStep>& out) {
  w.memory(z.act((backward ? 3 : 2) * z.T * z.h));  // norm
  w.close(out, backward ? "mlp norm bwd" : "mlp norm");
  int compute = last_step(out), ring = compute, grads = compute;
  const int steps = static_cast<int>(z.D);
  for (int j = 0; j < steps; ++j) {
    mlp_step(w, z, backward);
    close_after(w, out, fmt::format("{} {}", backward ? "mlp ring bwd" : "mlp ring", j),
                {compute, ring});
    compute = last_step(out);
    if (j + 1 < steps) {
      collective_after(out, backward ? "mlp weights ring bwd" : "mlp weights ring",
                 CollectiveKind::kSendRecv, z.mlp_shard(), StepGroup::kWeights, {ring});
      ring = last_step(out);
    }
    if (backward) {  // the shard's accumulated gradient moves on after this step
      collective_after(out, "mlp wgrad ring", CollectiveKind::kSendRecv, z.mlp_shard(),
                 StepGroup::kWeights, {compute, grads});
      grads = last_step(out);
    }
  }
  w.memory(z.act(3 * z.T * z.h));  // residual
  close_after(w, out, backward ? "mlp out bwd" : "mlp out", {compute, ring, grads});
}

}  // namespace

LayerProgram tsp_layer_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  const double D = sc.parallel.tp;
  Tsp z{x.b * sc.model.seq_len / D, x.b, static_cast<double>(sc.model.seq_len), x.h,
        x.kv * x.d, x.f, x.a, x.d, D, x.e};
  z.B = sc.parallel.tsp_kv_buckets;
  StepWriter w(costs, sc.training.precision);
  LayerProgram p;
  attention(w, z, false, p.forward);
  mlp(w, z, false, p.forward);
  const bool full_recompute = sc.training.recompute == cost::Recompute::kFull;
  if (full_recompute) {  // the layer's forward again, weight transfers and K/V gathers included
    p.backward = p.forward;
    for (auto& s : p.backward) {
      (s.is_collective ? s.collective.label : s.compute.label).insert(0, "recompute ");
    }
  }
  const int offset = static_cast<int>(p.backward.size());
  std::vector<LayerStep> backward;
  mlp(w, z, true, backward);
  attention(w, z, true, backward);
  for (auto& s : backward) {
    for (int& a : s.after) a += offset;  // indices move with the recompute prefix
    p.backward.push_back(std::move(s));
  }
  p.backward_input = p.backward;
  cost::Flops fwd;
  for (const auto& s : p.forward) {
    if (!s.is_collective) fwd += s.compute.flops;
  }
  p.model_flops = fwd * 3.0;
  // Activations: the unsharded layer's (FlashAttention, so Korthikanti's selective figure) over
  // D; transients: two K/V buckets (forward: the one attended and the next arriving; backward:
  // the gathered K/V and its dK/dV awaiting the reduce-scatter) and two buffers of each weight
  // shard.
  auto shape = activation_shape(sc);
  shape.seq_len = sc.model.seq_len / D;
  shape.tp = 1;
  shape.sequence_parallel = false;
  const double all = cost::activation_bytes_per_layer(shape, cost::Recompute::kSelective).value;
  p.activation_stored_bytes =
      full_recompute ? cost::activation_bytes_per_layer(shape, cost::Recompute::kFull).value : all;
  p.activation_full_bytes = all + 2 * z.kv_gathered() + 2 * z.attn_shard() + 2 * z.mlp_shard();
  return p;
}

}  // namespace parasim::strat
