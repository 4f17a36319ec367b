#include "strategies/layers/cp_attention.hpp"

#include <string>
#include <utility>

#include "strategies/layers/attention_core.hpp"

namespace parasim::strat::detail {
namespace {

using cost::CollectiveKind;

// The K/V block one context-parallel rank holds: K and V of its s/cp tokens, its heads.
double kv_block_bytes(const Dims& x) {
  return x.act(2 * x.tokens() * x.kv * x.d / x.t);
}

void cp_collective(std::vector<LayerStep>& out, std::string label, CollectiveKind kind,
                   double bytes, std::vector<int> after, StepGroup group) {
  collective_after(out, std::move(label), kind, bytes, group, std::move(after));
}

// Context-parallel attention core, forward (Liu et al. 2023, ring attention, arXiv 2310.01889;
// Megatron CP with the zigzag split, each rank's causal work 1/cp of the total): cp blocks of
// (s/cp) x (s/cp) for the local queries, each with half its FLOPs (causal, zigzag-balanced on
// average). Ring: block i+1's K/V arrive while block i computes (cp-1 send-recv shifts on the
// cp stream). All-gather: all K/V first, then the cp blocks. `opened`: the label of the block
// closed first; `group`: the ring's ranks.
void ring_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out,
                  const std::string& opened, StepGroup group) {
  w.close(out, opened);
  const int qkv = last_step(out);
  const int cp = static_cast<int>(x.cp);
  if (x.cp_comm == CpComm::kAllGather) {
    cp_collective(out, "attn kv all-gather", CollectiveKind::kAllGather, kv_block_bytes(x) * cp, {},
                  group);
    for (int i = 0; i < cp; ++i) attention_core_forward(w, x);
    w.close(out, "attn core");
    return;
  }
  int previous_compute = qkv, previous_transfer = qkv;
  for (int i = 0; i < cp; ++i) {
    attention_core_forward(w, x);
    w.close(out, "attn ring " + std::to_string(i));
    out.back().after = i == 0 ? std::vector<int>{previous_compute}
                              : std::vector<int>{previous_compute, previous_transfer};
    previous_compute = last_step(out);
    if (i + 1 < cp) {
      cp_collective(out, "attn kv ring", CollectiveKind::kSendRecv, kv_block_bytes(x),
                    {previous_transfer}, group);
      previous_transfer = last_step(out);
    }
  }
}

// Backward: cp blocks of FlashAttention's backward; K/V blocks travel ahead of the compute as in
// the forward, and each block's dK/dV travel on after it is computed (2x the forward's bytes).
void ring_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out,
                   const std::string& opened, StepGroup group) {
  w.close(out, opened);
  const int start = last_step(out);
  const int cp = static_cast<int>(x.cp);
  if (x.cp_comm == CpComm::kAllGather) {
    cp_collective(out, "attn kv all-gather bwd", CollectiveKind::kAllGather, kv_block_bytes(x) * cp,
                  {}, group);
    for (int i = 0; i < cp; ++i) attention_core_backward(w, x);
    w.close(out, "attn core bwd");
    cp_collective(out, "attn dkv reduce-scatter", CollectiveKind::kReduceScatter,
                  kv_block_bytes(x) * cp, {}, group);
    return;
  }
  int previous_compute = start, kv = start, dkv = start;
  for (int i = 0; i < cp; ++i) {
    attention_core_backward(w, x);
    w.close(out, "attn ring bwd " + std::to_string(i));
    out.back().after =
        i == 0 ? std::vector<int>{previous_compute} : std::vector<int>{previous_compute, kv};
    previous_compute = last_step(out);
    if (i + 1 < cp) {
      // The next block's K/V first (prefetch), then this block's dK/dV: the cp stream is FIFO.
      cp_collective(out, "attn kv ring bwd", CollectiveKind::kSendRecv, kv_block_bytes(x), {kv},
                    group);
      kv = last_step(out);
      cp_collective(out, "attn dkv ring", CollectiveKind::kSendRecv, kv_block_bytes(x),
                    {dkv, previous_compute}, group);
      dkv = last_step(out);
    }
  }
  // The input-gradient GEMMs need every block's gradient: after the last compute and dK/dV.
  out.push_back(LayerStep{});
  out.back().compute.label = "attn ring join";
  out.back().after = {previous_compute, dkv};
}

// One rank's [s, B, heads / t, d] tensor of `heads` heads (cp_attention.hpp): an all-to-all's
// message.
double a2a_tensor_bytes(const Dims& x, double heads) {
  return x.act(x.tokens() * heads * x.d / x.t);
}

// TE's two copies around an all-to-all'd tensor (cp_attention.hpp): read and write it, twice.
void a2a_copy(StepWriter& w, double bytes) {
  w.memory(2 * bytes);
}

// The all-to-alls of `tensors` (label, heads) in order, each chained after the previous step,
// with their send-side copies in the open block (closed first as `opened`) and their
// receive-side copies left open for the block that follows.
void a2a_exchange(StepWriter& w, const Dims& x, std::vector<LayerStep>& out,
                  const std::string& opened,
                  const std::vector<std::pair<const char*, double>>& tensors, StepGroup group) {
  for (const auto& tensor : tensors) a2a_copy(w, a2a_tensor_bytes(x, tensor.second));
  w.close(out, opened);
  for (const auto& tensor : tensors) {
    cp_collective(out, tensor.first, CollectiveKind::kAllToAll, a2a_tensor_bytes(x, tensor.second),
                  {}, group);
  }
  for (const auto& tensor : tensors) a2a_copy(w, a2a_tensor_bytes(x, tensor.second));
}

// The dims attention sees after the heads are scattered over `group` ranks: `group` times the
// tokens, 1/group of the heads; the ring (a2a+p2p) then runs over cp / group ranks.
Dims heads_scattered(const Dims& x, double group) {
  Dims y = x;
  y.s = x.s * group;
  y.a = x.a / group;
  y.kv = x.kv / group;
  y.cp = x.cp / group;
  return y;
}

std::vector<std::pair<const char*, double>> qkv_tensors(const Dims& x, bool backward) {
  if (backward)
    return {
        {"attn dq all-to-all", x.a}, {"attn dk all-to-all", x.kv}, {"attn dv all-to-all", x.kv}};
  return {{"attn q all-to-all", x.a}, {"attn k all-to-all", x.kv}, {"attn v all-to-all", x.kv}};
}

}  // namespace

void cp_attention_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  if (x.cp_comm == CpComm::kRing || x.cp_comm == CpComm::kAllGather) {
    ring_forward(w, x, out, "attn qkv", StepGroup::kContextParallel);
    return;
  }
  const bool ulysses = x.cp_comm == CpComm::kAllToAll;
  const double group = ulysses ? x.cp : x.cp_a2a;
  const StepGroup a2a = ulysses ? StepGroup::kContextParallel : StepGroup::kContextAllToAll;
  a2a_exchange(w, x, out, "attn qkv", qkv_tensors(x, false), a2a);
  Dims y = heads_scattered(x, group);
  if (ulysses) {
    attention_core_forward(w, y);
  } else {
    y.cp_comm = CpComm::kRing;
    ring_forward(w, y, out, "attn a2a reorder", StepGroup::kContextRing);
  }
  a2a_exchange(w, x, out, "attn core", {{"attn out all-to-all", x.a}}, a2a);
}

void cp_attention_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  if (x.cp_comm == CpComm::kRing || x.cp_comm == CpComm::kAllGather) {
    ring_backward(w, x, out, "attn proj bwd", StepGroup::kContextParallel);
    return;
  }
  const bool ulysses = x.cp_comm == CpComm::kAllToAll;
  const double group = ulysses ? x.cp : x.cp_a2a;
  const StepGroup a2a = ulysses ? StepGroup::kContextParallel : StepGroup::kContextAllToAll;
  a2a_exchange(w, x, out, "attn proj bwd", {{"attn dout all-to-all", x.a}}, a2a);
  Dims y = heads_scattered(x, group);
  if (ulysses) {
    attention_core_backward(w, y);
  } else {
    y.cp_comm = CpComm::kRing;
    ring_backward(w, y, out, "attn a2a reorder bwd", StepGroup::kContextRing);
  }
  a2a_exchange(w, x, out, "attn core bwd", qkv_tensors(x, true), a2a);
}

}  // namespace parasim::strat::detail

namespace parasim::strat {

bool is_context_parallel(StepGroup g) {
  return g == StepGroup::kContextParallel || g == StepGroup::kContextAllToAll ||
         g == StepGroup::kContextRing;
}

CpGroupShape cp_group_shape(const ParallelSpec& p, StepGroup g) {
  const int inner = p.cp_comm == CpComm::kAllToAllP2p && p.cp_a2a_size > 0 ? p.cp_a2a_size : p.cp;
  if (g == StepGroup::kContextAllToAll) return {inner, 1};
  if (g == StepGroup::kContextRing) return {p.cp / inner, inner};
  return {p.cp, 1};
}

}  // namespace parasim::strat
