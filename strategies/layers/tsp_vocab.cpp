#include "strategies/layers/tsp_vocab.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat {
namespace {

using namespace detail;

void send_shard(std::vector<LayerStep>& out, std::string label, double bytes,
                std::vector<int> after) {
  collective_after(out, std::move(label), CollectiveKind::kSendRecv, bytes, StepGroup::kWeights,
                   std::move(after));
}

struct Ring {
  int D;         // ranks and steps
  double rows;   // vocabulary rows per shard, ceil(V/D)
  double shard;  // bytes of one shard (rows x h)
};

Ring ring_of(const Dims& x) {
  const double rows = std::ceil(x.v / x.t);
  return Ring{static_cast<int>(x.t), rows, x.act(rows * x.h)};
}

// The backward of a weight ring: each step's work, then the gradient of the shard it held moves
// on; with `weights` the shards travel again as in the forward. `start` is the step before the
// ring (-1: none, the ring opens the list).
void backward_ring(StepWriter& w, std::vector<LayerStep>& out, const Ring& g, bool weights,
                   const std::string& name, const std::function<void(StepWriter&)>& step) {
  const int start = last_step(out);
  int compute = start, ring = start, grads = -1;
  auto with = [](std::vector<int> after, int also) {
    if (also >= 0) after.push_back(also);
    return after;
  };
  for (int j = 0; j < g.D; ++j) {
    step(w);
    close_after(w, out, fmt::format("{} ring bwd {}", name, j),
                compute < 0 ? std::vector<int>{} : with({compute}, ring));
    compute = last_step(out);
    if (weights && j + 1 < g.D) {
      send_shard(out, name + " weights ring bwd", g.shard, {ring < 0 ? compute : ring});
      ring = last_step(out);
    }
    send_shard(out, name + " wgrad ring", g.shard, with({compute}, grads));
    grads = last_step(out);
  }
}

}  // namespace

LayerProgram tsp_embedding_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  const Ring g = ring_of(x);
  StepWriter w(costs, sc.training.precision);
  LayerProgram p;
  const double bsh = x.act(x.tokens() * x.h);
  int compute = -1, ring = -1;
  for (int j = 0; j < g.D; ++j) {
    w.memory((bsh + x.tokens() * 8) / g.D);  // the rows of this shard's ids, read token ids
    w.close(p.forward, fmt::format("embed ring {}", j));
    if (j > 0) p.forward.back().after = {compute, ring};
    compute = last_step(p.forward);
    if (j + 1 < g.D) {
      send_shard(p.forward, "embed weights ring", g.shard, {j > 0 ? ring : compute});
      ring = last_step(p.forward);
    }
  }
  backward_ring(w, p.backward, g, false, "embed",
                [&](StepWriter& s) { s.memory(2 * bsh / g.D); });  // scatter-add of row gradients
  // No B/W split: TSP refuses zero-bubble schedules (scenario_parser), so the whole backward is
  // the input-gradient half and weight_grad stays empty, as for TSP's layers.
  p.backward_input = p.backward;
  return p;
}

LayerProgram tsp_head_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  const Ring g = ring_of(x);
  StepWriter w(costs, sc.training.precision);
  LayerProgram p;
  const double T = x.tokens(), hidden = x.act(T * x.h);
  const double logits = T * g.rows;  // per step
  w.memory(2 * hidden);              // final norm
  w.close(p.forward, "head norm");
  int compute = 0, ring = 0;
  for (int j = 0; j < g.D; ++j) {
    w.gemm(T, g.rows, x.h);
    w.memory(x.act(logits) + 4 * logits);  // this shard's part of the fp32 cross-entropy
    close_after(w, p.forward, fmt::format("head ring {}", j), {compute, ring});
    compute = last_step(p.forward);
    if (j + 1 < g.D) {
      send_shard(p.forward, "head weights ring", g.shard, {ring});
      ring = last_step(p.forward);
    }
  }
  w.memory(4 * T);  // the loss from the running max and sum of exponentials
  close_after(w, p.forward, "head loss", {compute, ring});
  w.memory(4 * T);  // the loss gradient's per-token factors
  w.close(p.backward, "head loss bwd");
  backward_ring(w, p.backward, g, true, "head", [&](StepWriter& s) {
    s.memory(4 * logits + x.act(logits));  // this shard's loss gradient
    s.gemm_backward(T, g.rows, x.h);
  });
  w.memory(3 * hidden);  // final norm backward
  close_after(w, p.backward, "head norm bwd", {last_step(p.backward)});
  p.backward_input = p.backward;
  p.model_flops = cost::Flops{2.0 * T * x.v * x.h * 3.0};  // unpadded V
  return p;
}

}  // namespace parasim::strat
