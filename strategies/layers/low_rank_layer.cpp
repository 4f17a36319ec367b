#include "strategies/layers/low_rank_layer.hpp"

#include <array>
#include <string>
#include <vector>

#include "strategies/layers/attention_core.hpp"
#include "strategies/layers/step_writer.hpp"

namespace parasim::strat {
namespace {

using namespace detail;

// One kernel or collective of the forward, kept so that the backward can mirror it.
struct Op {
  enum Kind { kGemm, kGroup, kMemory, kCore, kClose, kAllReduce } kind;
  std::vector<std::array<double, 3>> shapes;  // (m, n, k) per GEMM
  double bytes = 0;
  std::string label;
};

class Forward {
 public:
  void gemm(double m, double n, double k) { ops_.push_back({Op::kGemm, {{m, n, k}}, 0, {}}); }
  void group(std::vector<std::array<double, 3>> shapes, bool grouped) {
    if (grouped) {
      ops_.push_back({Op::kGroup, std::move(shapes), 0, {}});
    } else {
      for (const auto& s : shapes) gemm(s[0], s[1], s[2]);
    }
  }
  void memory(double bytes) { ops_.push_back({Op::kMemory, {}, bytes, {}}); }
  void core() { ops_.push_back({Op::kCore, {}, 0, {}}); }
  void close(std::string label) { ops_.push_back({Op::kClose, {}, 0, std::move(label)}); }
  void all_reduce(std::string label, double bytes) {
    ops_.push_back({Op::kAllReduce, {}, bytes, std::move(label)});
  }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
};

void emit_forward(const std::vector<Op>& ops, StepWriter& w, const Dims& x,
                  std::vector<LayerStep>& out, const std::string& prefix, bool collectives) {
  for (const Op& op : ops) {
    switch (op.kind) {
      case Op::kGemm: w.gemm(op.shapes[0][0], op.shapes[0][1], op.shapes[0][2]); break;
      case Op::kGroup: w.gemm_group(op.shapes); break;
      case Op::kMemory: w.memory(op.bytes); break;
      case Op::kCore: attention_core_forward(w, x); break;
      case Op::kClose: w.close(out, prefix + op.label); break;
      case Op::kAllReduce:
        if (collectives && x.t > 1) {
          StepWriter::collective(out, op.label, CollectiveKind::kAllReduce, op.bytes);
        }
        break;
    }
  }
}

// The mirror: blocks in reverse order, each GEMM's two gradients, the conjugate all-reduces.
void emit_backward(const std::vector<Op>& ops, StepWriter& w, const Dims& x,
                   std::vector<LayerStep>& out) {
  std::string label = "bwd";
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const Op& op = *it;
    switch (op.kind) {
      case Op::kGemm: w.gemm_backward(op.shapes[0][0], op.shapes[0][1], op.shapes[0][2]); break;
      case Op::kGroup: {
        std::vector<std::array<double, 3>> grads;
        for (const auto& s : op.shapes) grads.push_back({s[0], s[2], s[1]});  // dX
        w.gemm_group(grads);
        grads.clear();
        for (const auto& s : op.shapes) grads.push_back({s[2], s[1], s[0]});  // dW
        w.gemm_group(grads);
        break;
      }
      case Op::kMemory: w.memory(1.5 * op.bytes); break;
      case Op::kCore: attention_core_backward(w, x); break;
      case Op::kClose: label = op.label + " bwd"; break;
      case Op::kAllReduce:
        if (x.t > 1) {
          w.close(out, label);
          StepWriter::collective(out, op.label + " bwd", CollectiveKind::kAllReduce, op.bytes);
        }
        break;
    }
  }
  w.close(out, label);
}

struct Sizes {
  double T, h, kvd, f, ra, rm, t, e;
  bool cola;  // an activation on the bottleneck (cola, lax)
  bool lax;   // LaX's latent crossing: the previous pair's latent added to this one's
  double act(double elements) const { return elements * e; }
  // The ops on one pair's r-wide latent of `width` elements per token: CoLA's activation; LaX's
  // crossing h_i + h_(i-1) before the up-projection (Zhang et al., arXiv 2505.21732), one
  // elementwise add (two reads, one write) local to the rank in both placements.
  void latent(Forward& fw, double width) const {
    if (cola) fw.memory(act(2 * T * width));
    if (lax) fw.memory(act(3 * T * width));
  }
};

// Vanilla: replicated residual stream; pairs column-split on r.
void vanilla(const Sizes& z, bool grouped, Forward& fw) {
  const double T = z.T, t = z.t;
  fw.memory(z.act(2 * T * z.h));                                        // norm (replicated)
  fw.group({{T, z.ra / t, z.h}, {T, z.ra / t, z.h}, {T, z.ra / t, z.h}}, grouped);  // Q,K,V down
  z.latent(fw, 3 * z.ra / t);
  fw.group({{T, z.h, z.ra / t}, {T, z.kvd, z.ra / t}, {T, z.kvd, z.ra / t}}, grouped);  // ups
  fw.close("attn qkv");
  if (grouped) {
    fw.all_reduce("attn qkv all-reduce", z.act(T * (z.h + 2 * z.kvd)));
  } else {
    fw.all_reduce("attn q all-reduce", z.act(T * z.h));
    fw.all_reduce("attn k all-reduce", z.act(T * z.kvd));
    fw.all_reduce("attn v all-reduce", z.act(T * z.kvd));
  }
  fw.core();
  fw.gemm(T, z.ra / t, z.h);                                            // O down
  z.latent(fw, z.ra / t);
  fw.gemm(T, z.h, z.ra / t);                                            // O up
  fw.close("attn o");
  fw.all_reduce("attn o all-reduce", z.act(T * z.h));
  fw.memory(z.act(3 * T * z.h));                                        // residual add
  fw.memory(z.act(2 * T * z.h));                                        // norm
  fw.group({{T, z.rm / t, z.h}, {T, z.rm / t, z.h}}, grouped);          // gate, up down
  z.latent(fw, 2 * z.rm / t);
  fw.group({{T, z.f, z.rm / t}, {T, z.f, z.rm / t}}, grouped);          // gate, up up
  fw.close("mlp gate-up");
  if (grouped) {
    fw.all_reduce("mlp gate-up all-reduce", z.act(T * 2 * z.f));
  } else {
    fw.all_reduce("mlp gate all-reduce", z.act(T * z.f));
    fw.all_reduce("mlp up all-reduce", z.act(T * z.f));
  }
  fw.memory(z.act(3 * T * z.f));                                        // SwiGLU, replicated
  fw.gemm(T, z.rm / t, z.f);                                            // down's down
  z.latent(fw, z.rm / t);
  fw.gemm(T, z.h, z.rm / t);                                            // down's up
  fw.close("mlp down");
  fw.all_reduce("mlp down all-reduce", z.act(T * z.h));
  fw.memory(z.act(3 * T * z.h));                                        // residual add
}

// BTP: sharded residual stream; chunks from an up-projection to the next down-projection.
void btp(const Sizes& z, bool grouped, bool online, Forward& fw) {
  const double T = z.T, t = z.t;
  const double stat = 4.0 * T;  // the per-token RMS statistic, fp32
  fw.memory(z.act(2 * T * z.h / t));                                    // norm, sharded
  if (!online) {
    fw.close("attn norm");
    fw.all_reduce("attn norm statistic all-reduce", stat);
  }
  fw.group({{T, z.ra, z.h / t}, {T, z.ra, z.h / t}, {T, z.ra, z.h / t}}, grouped);  // row-par downs
  fw.close("attn qkv down");
  const double extra = online ? stat : 0.0;
  if (grouped) {
    fw.all_reduce("attn qkv all-reduce", z.act(T * 3 * z.ra) + extra);
  } else {
    fw.all_reduce("attn q all-reduce", z.act(T * z.ra) + extra);
    fw.all_reduce("attn k all-reduce", z.act(T * z.ra));
    fw.all_reduce("attn v all-reduce", z.act(T * z.ra));
  }
  z.latent(fw, 3 * z.ra);
  fw.group({{T, z.h / t, z.ra}, {T, z.kvd / t, z.ra}, {T, z.kvd / t, z.ra}}, grouped);  // col-par ups
  fw.core();
  fw.gemm(T, z.ra, z.h / t);                                            // O down, row-parallel
  fw.close("attn o down");
  fw.all_reduce("attn o all-reduce", z.act(T * z.ra));
  z.latent(fw, z.ra);
  fw.gemm(T, z.h / t, z.ra);                                            // O up
  fw.memory(z.act(3 * T * z.h / t));                                    // residual add
  fw.memory(z.act(2 * T * z.h / t));                                    // norm
  if (!online) {
    fw.close("mlp norm");
    fw.all_reduce("mlp norm statistic all-reduce", stat);
  }
  fw.group({{T, z.rm, z.h / t}, {T, z.rm, z.h / t}}, grouped);          // gate, up downs
  fw.close("mlp gate-up down");
  if (grouped) {
    fw.all_reduce("mlp gate-up all-reduce", z.act(T * 2 * z.rm) + extra);
  } else {
    fw.all_reduce("mlp gate all-reduce", z.act(T * z.rm) + extra);
    fw.all_reduce("mlp up all-reduce", z.act(T * z.rm));
  }
  z.latent(fw, 2 * z.rm);
  fw.group({{T, z.f / t, z.rm}, {T, z.f / t, z.rm}}, grouped);          // gate, up ups
  fw.memory(z.act(3 * T * z.f / t));                                    // SwiGLU, sharded
  fw.gemm(T, z.rm, z.f / t);                                            // down's down
  fw.close("mlp down");
  fw.all_reduce("mlp down all-reduce", z.act(T * z.rm));
  z.latent(fw, z.rm);
  fw.gemm(T, z.h / t, z.rm);                                            // down's up
  fw.memory(z.act(3 * T * z.h / t));                                    // residual add
  fw.close("mlp up");
}

// Activations one rank keeps for the backward, per tensor (ours; BOOST gives no itemisation).
double stored_activations(const Sizes& z, const Scenario& sc, bool is_btp) {
  const double T = z.T, t = z.t;
  const double bottleneck = z.cola ? 2.0 : 1.0;  // cola keeps the pre-activation too
  const double a = sc.model.heads, s = sc.model.seq_len;
  // Softmax probabilities (unfused); FlashAttention keeps none.
  const double core = sc.training.attention == AttentionKind::kFlash
                          ? 0.0
                          : z.act(a / t * s * s * sc.training.micro_batch);
  const double stream = is_btp ? z.h / t : z.h;    // residual stream width on this rank
  double elements = 0;
  elements += 2 * stream;                          // two norm inputs
  elements += 2 * stream;                          // inputs of the QKV and gate/up downs
  elements += (is_btp ? 3 * z.ra : 3 * z.ra / t) * bottleneck;
  elements += (z.h + 2 * z.kvd) / t;               // Q, K, V (this rank's heads)
  elements += z.h / t;                             // attention output, input of O
  elements += (is_btp ? z.ra : z.ra / t) * bottleneck;
  elements += (is_btp ? 2 * z.rm : 2 * z.rm / t) * bottleneck;
  elements += is_btp ? 3 * z.f / t : 3 * z.f;      // gate, up, and their product
  elements += (is_btp ? z.rm : z.rm / t) * bottleneck;
  return z.act(T * elements) + core;
}

}  // namespace

LayerProgram low_rank_layer_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  const auto& lr = sc.model.low_rank;
  const auto& par = sc.parallel;
  Sizes z{x.tokens(), x.h, x.kv * x.d, x.f, static_cast<double>(lr.attn_rank),
          static_cast<double>(lr.mlp_rank), x.t, x.e, lr.variant != LowRankVariant::kSvd,
          lr.variant == LowRankVariant::kLax};
  const bool is_btp = par.tp_placement == TpPlacement::kBtp;
  Forward fw;
  if (is_btp) {
    btp(z, par.linear_grouping, par.online_rmsnorm, fw);
  } else {
    vanilla(z, par.linear_grouping, fw);
  }
  LayerProgram p;
  StepWriter w(costs, sc.training.precision);
  emit_forward(fw.ops(), w, x, p.forward, "", true);
  const bool checkpoint = is_btp && par.lowrank_checkpointing;
  if (checkpoint) emit_forward(fw.ops(), w, x, p.backward, "recompute ", false);
  emit_backward(fw.ops(), w, x, p.backward);
  // Zero-bubble split (not offered with low-rank placements by the parser, kept consistent).
  p.backward_input = p.backward;
  cost::Flops fwd;
  for (const auto& s : p.forward) {
    if (!s.is_collective) fwd += s.compute.flops;
  }
  p.model_flops = fwd * 3.0;
  p.activation_full_bytes = stored_activations(z, sc, is_btp);
  // Checkpointing keeps the r-wide chunk boundaries (replicated) and the layer input (sharded).
  p.activation_stored_bytes =
      checkpoint ? z.act(z.T * (3 * z.ra + z.ra + 2 * z.rm + z.rm + z.h / z.t))
                 : p.activation_full_bytes;
  return p;
}

}  // namespace parasim::strat
