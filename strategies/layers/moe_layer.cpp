#include "strategies/layers/moe_layer.hpp"

#include <algorithm>

#include "costmodel/expert_load.hpp"
#include "costmodel/token_exchange.hpp"
#include "strategies/layers/layer_kernels.hpp"

namespace parasim::strat::detail {
namespace {

void group_collective(std::vector<LayerStep>& out, const char* label, CollectiveKind kind,
                      double bytes, StepGroup group) {
  StepWriter::collective(out, label, kind, bytes);
  out.back().group = group;
}

// The shared experts: a dense SwiGLU MLP of width shared_ffn on the attention's tp group
// (megatron-core shared_experts.py: the tp group, not etp), its SP gather and scatter included.
void shared_forward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out) {
  if (m.shared_ffn <= 0) return;
  const double bsh = x.act(x.tokens() * x.h);
  w.close(out, "moe norm");
  if (x.t > 1 && x.sp)
    StepWriter::collective(out, "shared all-gather", CollectiveKind::kAllGather, bsh);
  w.linear(x.tokens(), 2 * m.shared_ffn / x.t, x.h);
  w.memory(3 * x.act(x.tokens() * m.shared_ffn / x.t));
  w.linear(x.tokens(), x.h, m.shared_ffn / x.t);
  w.close(out, "shared experts");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "shared reduce-scatter" : "shared all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

void shared_backward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out) {
  if (m.shared_ffn <= 0) return;
  const double bsh = x.act(x.tokens() * x.h);
  w.close(out, "moe bwd");
  if (x.t > 1 && x.sp) {
    StepWriter::collective(out, "shared bwd all-gather", CollectiveKind::kAllGather, bsh);
  }
  w.linear_backward(x.tokens(), x.h, m.shared_ffn / x.t);
  w.memory(5 * x.act(x.tokens() * m.shared_ffn / x.t));
  w.linear_backward(x.tokens(), 2 * m.shared_ffn / x.t, x.h);
  w.close(out, "shared experts bwd");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "shared bwd reduce-scatter" : "shared bwd all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

// Router (router.py, moe_utils.py): the gating GEMM, the score and top-k kernels over [T x E]
// (fp32 scores), the probabilities and routing map scattered dense; aux losses re-score for the
// loss and sum the counts; expert bias accumulates the counts.
void router_forward(StepWriter& w, const MoeDims& m, const Dims& x, std::vector<LayerStep>& out) {
  const double te = m.tokens * m.experts;
  w.gemm(m.tokens, m.experts, x.h);           // logits
  w.memory(te * (x.e + 4));                   // softmax / sigmoid, fp32 scores
  w.memory(te * 4 + m.tokens * m.top_k * 8);  // top-k: values and indices
  w.memory(te * (4 + 1));                     // probs and routing map, dense
  if (m.aux_loss) {
    w.memory(te * 8);  // the loss's own score pass
    w.memory(te * 1);  // tokens per expert
  }
  if (m.expert_bias) w.memory(te * 1);  // counts for the bias update
  w.memory(te * 1);                     // tokens per expert for the splits
  w.close(out, "router");
  if (m.aux_loss && x.t > 1) {
    StepWriter::collective(out, "aux loss counts all-reduce", CollectiveKind::kAllReduce,
                           m.experts * 4);
  }
}

void router_backward(StepWriter& w, const MoeDims& m, const Dims& x) {
  const double te = m.tokens * m.experts;
  if (m.aux_loss) w.memory(te * 8);           // the loss's gradient into the scores
  w.memory(te * (4 + 4 + x.e));               // score and top-k backward
  w.gemm_backward(m.tokens, m.experts, x.h);  // gating GEMM
}

// The expert computation on `computed` tokens: grouped fc1, SwiGLU x probs, grouped fc2.
void experts_forward(StepWriter& w, const Dims& x, const MoeDims& m) {
  const double n = m.local_experts, rows = m.computed() / n, f = m.expert_ffn / m.etp;
  w.linear(rows, 2 * f, x.h, n);
  w.memory(3 * x.act(m.computed() * f) + 4 * m.computed());
  w.linear(rows, x.h, f, n);
}

void experts_backward(StepWriter& w, const Dims& x, const MoeDims& m) {
  const double n = m.local_experts, rows = m.computed() / n, f = m.expert_ffn / m.etp;
  // moe_act: the activation (with the probabilities) rerun from fc1's output before fc2's
  // backward reads its output (discard_output_and_register_recompute, experts.py).
  if (m.recompute_act) w.memory(3 * x.act(m.computed() * f) + 4 * m.computed());
  w.count_weights_as_experts(true);  // their FP8 copies are expert parameters
  w.linear_backward(rows, x.h, f, n);
  w.memory(5 * x.act(m.computed() * f) + 8 * m.computed());
  w.linear_backward(rows, 2 * f, x.h, n);
  w.count_weights_as_experts(false);
}

// Megatron's --moe-shared-expert-overlap: the shared experts run on a stream of their own
// (shared_experts.py) under the exchange just issued, forward (`pass` shared_forward) and
// backward (shared_backward: autograd runs it on the stream its forward ran on). They start
// after step `start`; the experts wait for the exchange and for them (the returned steps).
// Nothing (the chain as usual) without the overlap.
using SharedPass = void (*)(StepWriter&, const Dims&, const MoeDims&, std::vector<LayerStep>&);
std::vector<int> shared_under_exchange(SharedPass pass, StepWriter& w, const Dims& x,
                                       const MoeDims& m, std::vector<LayerStep>& out, int start) {
  if (!m.shared_overlap) return {};
  const int exchanged = last_step(out);
  const std::size_t first_shared = out.size();
  pass(w, x, m, out);
  if (out.size() == first_shared) return {};
  out[first_shared].after = {start};
  return {exchanged, last_step(out)};
}

std::vector<int> shared_forward_under(StepWriter& w, const Dims& x, const MoeDims& m,
                                      std::vector<LayerStep>& out, int start) {
  return shared_under_exchange(shared_forward, w, x, m, out, start);
}

std::vector<int> shared_backward_under(StepWriter& w, const Dims& x, const MoeDims& m,
                                       std::vector<LayerStep>& out, int start) {
  return shared_under_exchange(shared_backward, w, x, m, out, start);
}

void alltoall_forward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out) {
  const double copies = m.tokens * m.top_k;        // this rank's token copies
  const double received = copies * m.rank_factor;  // the busiest rank's
  w.memory(x.act(m.tokens * x.h) + x.act(copies * x.h) + 3 * 8 * copies);  // permute
  w.close(out, "moe permute");
  const int permute = last_step(out);
  if (m.ep > 1) {
    group_collective(out, "moe dispatch all-to-all", CollectiveKind::kAllToAll,
                     x.act(received * x.h), StepGroup::kExpertParallel);
    group_collective(out, "moe probs all-to-all", CollectiveKind::kAllToAll, 4 * received,
                     StepGroup::kExpertParallel);
  }
  if (m.etp > 1) {
    group_collective(out, "moe dispatch all-gather", CollectiveKind::kAllGather,
                     x.act(m.computed() * x.h), StepGroup::kExpertTensor);
  }
  const std::vector<int> experts_after = shared_forward_under(w, x, m, out, permute);
  if (m.local_experts > 1 && m.ep > 1) w.memory(2 * x.act(m.computed() * x.h));  // sort chunks
  experts_forward(w, x, m);
  if (m.local_experts > 1 && m.ep > 1) w.memory(2 * x.act(m.computed() * x.h));  // unsort
  close_after(w, out, "experts", experts_after);
  if (m.etp > 1) {
    group_collective(out, "moe combine reduce-scatter", CollectiveKind::kReduceScatter,
                     x.act(m.computed() * x.h), StepGroup::kExpertTensor);
  }
  if (m.ep > 1) {
    group_collective(out, "moe combine all-to-all", CollectiveKind::kAllToAll,
                     x.act(received * x.h), StepGroup::kExpertParallel);
  }
  w.memory(x.act(copies * x.h) + 2 * x.act(m.tokens * x.h));  // unpermute: scatter-add
}

void alltoall_backward(StepWriter& w, const Dims& x, const MoeDims& m,
                       std::vector<LayerStep>& out) {
  const double copies = m.tokens * m.top_k, received = copies * m.rank_factor;
  w.memory(x.act(copies * x.h) + x.act(m.tokens * x.h));  // unpermute backward: gather
  w.close(out, "moe unpermute bwd");
  const int unpermuted = last_step(out);
  if (m.ep > 1) {
    group_collective(out, "moe combine bwd all-to-all", CollectiveKind::kAllToAll,
                     x.act(received * x.h), StepGroup::kExpertParallel);
  }
  if (m.etp > 1) {
    group_collective(out, "moe combine bwd all-gather", CollectiveKind::kAllGather,
                     x.act(m.computed() * x.h), StepGroup::kExpertTensor);
  }
  const std::vector<int> experts_after = shared_backward_under(w, x, m, out, unpermuted);
  if (m.local_experts > 1 && m.ep > 1) w.memory(2 * x.act(m.computed() * x.h));
  experts_backward(w, x, m);
  if (m.local_experts > 1 && m.ep > 1) w.memory(2 * x.act(m.computed() * x.h));
  close_after(w, out, "experts bwd", experts_after);
  if (m.etp > 1) {
    group_collective(out, "moe dispatch bwd reduce-scatter", CollectiveKind::kReduceScatter,
                     x.act(m.computed() * x.h), StepGroup::kExpertTensor);
  }
  if (m.ep > 1) {
    group_collective(out, "moe dispatch bwd all-to-all", CollectiveKind::kAllToAll,
                     x.act(received * x.h), StepGroup::kExpertParallel);
  }
  w.memory(x.act(copies * x.h) + 2 * x.act(m.tokens * x.h));  // permute backward: scatter-add
}

// The allgather dispatcher (token_dispatcher.py, MoEAllGatherTokenDispatcher): every token once
// (not k times), its routing map (1 byte per expert) and dense probabilities (4 bytes per
// expert), gathered over etp x ep; the outputs reduce-scattered back.
void allgather_forward(StepWriter& w, const Dims& x, const MoeDims& m,
                       std::vector<LayerStep>& out) {
  const double grid = m.etp * m.ep, gathered = grid * m.tokens;
  w.close(out, "moe dispatch prep");
  if (grid > 1) {
    group_collective(out, "moe dispatch all-gather", CollectiveKind::kAllGather,
                     x.act(gathered * x.h), StepGroup::kExpertGrid);
    group_collective(out, "moe routing all-gather", CollectiveKind::kAllGather,
                     gathered * m.experts * 5, StepGroup::kExpertGrid);
  }
  w.memory(gathered * m.experts + 2 * x.act(m.computed() * x.h));  // local mask, permute
  experts_forward(w, x, m);
  w.memory(x.act(gathered * x.h) + x.act(m.computed() * x.h));  // unpermute (zero-filled)
  w.close(out, "experts");
  if (grid > 1) {
    group_collective(out, "moe combine reduce-scatter", CollectiveKind::kReduceScatter,
                     x.act(gathered * x.h), StepGroup::kExpertGrid);
  }
}

void allgather_backward(StepWriter& w, const Dims& x, const MoeDims& m,
                        std::vector<LayerStep>& out) {
  const double grid = m.etp * m.ep, gathered = grid * m.tokens;
  w.close(out, "moe bwd prep");
  if (grid > 1) {
    group_collective(out, "moe combine bwd all-gather", CollectiveKind::kAllGather,
                     x.act(gathered * x.h), StepGroup::kExpertGrid);
  }
  w.memory(x.act(gathered * x.h) + x.act(m.computed() * x.h));
  experts_backward(w, x, m);
  w.memory(x.act(gathered * x.h) + x.act(m.computed() * x.h));
  w.close(out, "experts bwd");
  if (grid > 1) {
    group_collective(out, "moe dispatch bwd reduce-scatter", CollectiveKind::kReduceScatter,
                     x.act(gathered * x.h), StepGroup::kExpertGrid);
  }
}

// DeepEP's dispatch or combine over the etp x ep group, `bytes_per_token` to each target rank.
void token_exchange(std::vector<LayerStep>& out, const char* label, const MoeDims& m,
                    double bytes_per_token) {
  cost::TokenExchange exchange = m.exchange;
  exchange.bytes_per_token = bytes_per_token;
  // DeepEP's "logical" bytes (its README's bandwidth counts them): every copy a rank receives,
  // its own included.
  const double message = m.received * bytes_per_token;
  group_collective(out, label, CollectiveKind::kAllToAll, message, StepGroup::kExpertGrid);
  out.back().collective.exchange = exchange;
}

// The received tokens into local-expert order (Megatron's _indices_to_multihot, then permute):
// a multi-hot map and probabilities over the local experts, the k' copies gathered.
void flex_permute(StepWriter& w, const Dims& x, const MoeDims& m) {
  w.memory(m.received * m.local_experts * (8 + 4) + x.act(m.received * x.h) +
           x.act(m.computed() * x.h) + 8 * m.computed());
}

void flex_forward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out) {
  const double tk = m.tokens * m.top_k, grid = m.etp * m.ep;
  w.memory(m.tokens * m.experts * 4 + tk * 12);   // top-k of the probabilities
  w.memory(tk * 8 + m.tokens * grid + 4 * grid);  // get_dispatch_layout
  // The notify kernel, then the host waits for the received counts (fused_a2a.py: "the CPU will
  // wait for GPU's signal to arrive").
  w.sync(out, "moe dispatch layout", 1);
  const int layout = last_step(out);
  if (grid > 1) token_exchange(out, "moe dispatch (deepep)", m, x.act(x.h) + m.top_k * 12);
  const std::vector<int> experts_after = shared_forward_under(w, x, m, out, layout);
  flex_permute(w, x, m);
  experts_forward(w, x, m);
  w.memory(x.act(m.computed() * x.h) + 2 * x.act(m.received * x.h));  // unpermute: scatter-add
  close_after(w, out, "experts", experts_after);
  if (grid > 1) token_exchange(out, "moe combine (deepep)", m, x.act(x.h));
}

void flex_backward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out) {
  const double grid = m.etp * m.ep;
  w.close(out, "moe combine bwd prep");
  const int prepared = last_step(out);
  if (grid > 1) token_exchange(out, "moe combine bwd (deepep)", m, x.act(x.h));
  const std::vector<int> experts_after = shared_backward_under(w, x, m, out, prepared);
  flex_permute(w, x, m);
  experts_backward(w, x, m);
  w.memory(x.act(m.computed() * x.h) + 2 * x.act(m.received * x.h));
  close_after(w, out, "experts bwd", experts_after);
  if (grid > 1) token_exchange(out, "moe dispatch bwd (deepep)", m, x.act(x.h) + m.top_k * 4);
}

}  // namespace

MoeDims moe_dims_of(const Scenario& sc) {
  const MoeSpec& spec = sc.model.moe;
  const ParallelSpec& p = sc.parallel;
  const Dims x = dims_of(sc);
  MoeDims m;
  m.experts = spec.experts;
  m.top_k = spec.top_k;
  m.ep = p.ep;
  m.etp = p.expert_tp();
  m.local_experts = m.experts / m.ep;
  m.expert_ffn = spec.expert_ffn_hidden;
  m.shared_ffn = static_cast<double>(spec.shared_experts) * spec.shared_ffn_hidden;
  m.tokens = x.tokens() / (x.sp ? x.t : 1.0);
  m.sigmoid = spec.score == RouterScore::kSigmoid;
  m.aux_loss =
      spec.balancing == LoadBalancing::kAuxLoss || spec.balancing == LoadBalancing::kSeqAuxLoss;
  m.expert_bias = spec.balancing == LoadBalancing::kExpertBias;
  m.allgather = p.moe_dispatcher == MoeDispatcher::kAllGather;
  m.flex = p.moe_dispatcher == MoeDispatcher::kFlex;
  m.shared_overlap = p.moe_shared_expert_overlap && m.shared_ffn > 0 && !m.allgather;
  const bool selective = sc.training.recompute == cost::Recompute::kSelective;
  const cost::RecomputeModules& modules = sc.training.recompute_modules;
  m.recompute_layer = selective && modules.moe;
  // Inside the whole layer's checkpoint the parts' own recompute is the layer's.
  m.recompute_act = selective && modules.moe_act && !m.recompute_layer;
  m.recompute_shared = selective && modules.shared_experts && m.shared_ffn > 0 &&
                       !m.shared_overlap && !m.recompute_layer;
  // The busiest rank (costmodel/expert_load.hpp): the router's skew, measured or the published
  // default of its balancing, and the sampling of this micro-batch's tokens.
  double skew = spec.max_violation;
  if (skew < 0) {
    skew = spec.balancing == LoadBalancing::kExpertBias ? cost::kMaxViolationExpertBias
                                                        : cost::kMaxViolationAuxLoss;
  }
  if (spec.top_k == spec.experts) skew = 0;  // every expert takes every token
  const cost::ExpertLoad load =
      cost::expert_load({spec.experts, spec.top_k, p.ep, m.tokens, skew, spec.capacity_factor});
  m.rank_factor = load.rank_factor;
  m.kept_share = 1 - load.dropped_fraction;
  m.exchange = cost::TokenExchange{.tokens = m.tokens,
                                   .bytes_per_token = 0,
                                   .experts = spec.experts,
                                   .top_k = spec.top_k,
                                   .ep = p.ep,
                                   .etp = p.expert_tp(),
                                   .rank_factor = std::max(1.0, m.rank_factor)};
  m.received = m.etp * m.ep *
               cost::token_hit_probability(spec.experts, spec.top_k, m.local_experts) * m.tokens *
               m.rank_factor;
  return m;
}

void moe_block_forward(StepWriter& w, const Dims& x, const MoeDims& m,
                       std::vector<LayerStep>& out) {
  w.memory(2 * hidden_bytes(x));           // pre-MLP norm
  w.sync(out, "moe norm", x.layer_syncs);  // the framework's syncs before the MLP
  moe_layer_forward(w, x, m, out);
  bias_dropout_add(w, x);  // the residual add
  w.close(out, "moe combine");
}

void moe_layer_forward(StepWriter& w, const Dims& x, const MoeDims& m,
                       std::vector<LayerStep>& out) {
  if (!m.shared_overlap) shared_forward(w, x, m, out);
  router_forward(w, m, x, out);
  // Tokens per expert to the host for the all-to-all's splits (and the grouped GEMM's sizes):
  // an all-gather over ep of E int64 counts per rank, then a sync.
  if (m.ep > 1 && !m.allgather && !m.flex) {
    group_collective(out, "moe counts all-gather", CollectiveKind::kAllGather, 8 * m.experts * m.ep,
                     StepGroup::kExpertParallel);
  }
  if (m.flex) {
    flex_forward(w, x, m, out);
  } else if (m.allgather) {
    w.sync(out, "router", 1);
    allgather_forward(w, x, m, out);
  } else {
    w.sync(out, "router", 1);
    alltoall_forward(w, x, m, out);
  }
  if (m.shared_ffn > 0) w.memory(3 * hidden_bytes(x));  // + the shared experts' output
}

void moe_block_backward(StepWriter& w, const Dims& x, const MoeDims& m,
                        std::vector<LayerStep>& out) {
  bias_dropout_add_backward(w, x);
  if (m.flex) {
    flex_backward(w, x, m, out);
  } else if (m.allgather) {
    allgather_backward(w, x, m, out);
  } else {
    alltoall_backward(w, x, m, out);
  }
  router_backward(w, m, x);
  if (m.recompute_shared) {  // the checkpoint reruns the shared experts' forward first
    w.close(out, "moe bwd");  // the backward so far, not part of the rerun
    const std::size_t first = out.size();
    shared_forward(w, x, m, out);
    for (std::size_t i = first; i < out.size(); ++i) out[i].recompute = true;
  }
  if (!m.shared_overlap) shared_backward(w, x, m, out);
  residual_gradient_add(w, x);
  norm_backward(w, x);
  w.close(out, "moe bwd");
}

double moe_block_activation_bytes(const Dims& x, const MoeDims& m) {
  const double dropout_mask = x.dropout ? hidden_bytes(x) / x.e : 0.0;
  // "moe": the checkpoint keeps the layer's input (the pre-MLP norm's output) alone.
  if (m.recompute_layer) return hidden_bytes(x) + dropout_mask;
  const double f = m.expert_ffn / m.etp;
  double bytes = m.tokens * m.experts * (4 + 1);  // probabilities and routing map
  // Routed experts: fc1's input, SwiGLU's two inputs and fc2's input, the probabilities; the
  // linears' inputs at x.linear_input_bytes (FP8 under Transformer Engine's GroupedLinear).
  const double lin = x.linear_input_bytes / x.e;  // per activation byte
  // moe_act discards fc2's input (the activation's output).
  const double fc2_input = m.recompute_act ? 0 : lin;
  bytes += lin * x.act(m.computed() * x.h) + (2 + fc2_input) * x.act(m.computed() * f) +
           4 * m.computed();
  if (m.recompute_shared) {
    bytes += hidden_bytes(x);  // the checkpoint keeps its input, the pre-MLP norm's output
  } else if (m.shared_ffn > 0) {
    bytes += lin * hidden_bytes(x) + (2 + lin) * x.act(x.tokens() * m.shared_ffn / x.t);
  }
  bytes += dropout_mask;  // the residual dropout's mask
  return bytes;
}

}  // namespace parasim::strat::detail
