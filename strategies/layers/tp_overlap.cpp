#include "strategies/layers/tp_overlap.hpp"

#include <utility>

namespace parasim::strat::detail {
namespace {

using cost::CollectiveKind;

// A chunk transfer on the TP stream after the steps `after`, taking no SMs from the GEMMs beside
// it (tp_overlap.hpp).
int transfer(std::vector<LayerStep>& out, std::string label, CollectiveKind kind, double bytes,
             std::vector<int> after) {
  collective_after(out, std::move(label), kind, bytes, StepGroup::kTensorParallel,
                   std::move(after));
  out.back().copy_engine = true;
  return last_step(out);
}

// The writer's open block closed as a step after `after` (or an empty step there, so that a
// chunk always has an index to wait on).
int block(StepWriter& w, std::vector<LayerStep>& out, const std::string& label,
          std::vector<int> after) {
  const std::size_t before = out.size();
  close_after(w, out, label, after);
  if (out.size() == before) {
    out.push_back(LayerStep{});
    out.back().compute.label = label;
    out.back().after = std::move(after);
  }
  return last_step(out);
}

// Closes the open block as `opened` (chained after the previous step) and returns its index.
int open_block(StepWriter& w, std::vector<LayerStep>& out, const std::string& opened) {
  const int previous = last_step(out);
  return block(w, out, opened, previous >= 0 ? std::vector<int>{previous} : std::vector<int>{});
}

}  // namespace

double sm_margin_slowdown(int sm_count, int comm_sms) {
  if (sm_count <= comm_sms) return 1.0;  // unknown device (0): no margin applied
  return static_cast<double>(sm_count) / (sm_count - comm_sms);
}

double userbuffers_bytes(const Scenario& sc) {
  const ParallelSpec& p = sc.parallel;
  if (p.tp_comm_overlap != TpCommOverlap::kUserbuffers || p.tp < 2 || !p.sequence_parallel) {
    return 0;
  }
  constexpr int kGemms = 12;           // qkv, proj, fc1, fc2: fprop, dgrad, wgrad each
  constexpr int kAllGatherLayers = 8;  // base.py layers_all_gather_overlap
  constexpr double kBufferDtypeBytes = 2;  // initialize_ub's dtype default, torch.bfloat16
  const double elements = static_cast<double>(sc.model.seq_len) * sc.training.micro_batch /
                          p.cp * sc.model.hidden;
  const double sixteen_bit = kGemms * elements * kBufferDtypeBytes;
  if (!sc.training.fp8.enabled()) return sixteen_bit;
  const double fp8 = kAllGatherLayers * elements * 1.0 +
                     (kGemms - kAllGatherLayers) * elements * kBufferDtypeBytes;
  const bool bf16_layers =
      sc.training.fp8.bf16_layers_at_start > 0 || sc.training.fp8.bf16_layers_at_end > 0;
  return fp8 + (bf16_layers ? sixteen_bit : 0.0);
}

double TpOverlap::margin_slowdown() const {
  return mode == TpCommOverlap::kUserbuffers ? sm_margin_slowdown(sm_count, kUbCommSms) : 1.0;
}

void all_gather_gemm(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                     const std::string& opened, const OverlapGemm& g, double bytes) {
  const double t = o.tp;
  const double shard = bytes / t;
  // AsyncTP copies the local shard into its symmetric buffer first (the "mv" copy, read + write,
  // on the compute stream before the barrier: _pipelined_multi_all_gather_and_consume).
  if (o.mode == TpCommOverlap::kAsyncTp) w.memory(2 * shard);
  const int start = open_block(w, out, opened);
  // Both methods' chunks: tp (async-tp: one per source rank; ring_exchange: num_splits = tp).
  // ring_exchange keeps every SM (set_sm_margin false): no slowdown either way.
  w.linear_gemm(g.m / t, g.n, g.k);
  int gemm = block(w, out, g.label + " chunk", {start});
  int previous_transfer = start;
  for (int i = 1; i < o.tp; ++i) {
    previous_transfer = transfer(out, g.label + " all-gather chunk", CollectiveKind::kSendRecv,
                                 shard, {previous_transfer});
    w.linear_gemm(g.m / t, g.n, g.k);
    gemm = block(w, out, g.label + " chunk", {gemm, previous_transfer});
  }
  // AsyncTP returns the gathered input (the backward's weight gradient needs it: ag_out_needed),
  // so the local shard is copied into it too, after the last chunk's GEMM on the compute stream
  // (tp even; _pipelined_multi_all_gather_and_consume): opens the caller's next block.
  if (o.mode == TpCommOverlap::kAsyncTp) w.memory(2 * shard);
}

void gemm_reduce_scatter(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                         const std::string& opened, const OverlapGemm& g, double bytes) {
  const int start = open_block(w, out, opened);
  if (o.mode == TpCommOverlap::kAsyncTp) {
    // _pipelined_produce_and_all2all: for step 1..tp-1 the partial product for rank + step is
    // written into one of two symmetric buffers and pulled by its owner; the buffer is reused two
    // steps later (after that copy). The local chunk last, then reduce_partials sums the tp
    // partials (reads tp x S / tp, writes S / tp).
    const double t = o.tp;
    std::vector<int> transfers;
    int gemm = start;
    for (int i = 0; i + 1 < o.tp; ++i) {
      std::vector<int> after{gemm};
      if (i >= 2) after.push_back(transfers[static_cast<std::size_t>(i - 2)]);
      w.linear_gemm(g.m / t, g.n, g.k);
      gemm = block(w, out, g.label + " chunk", after);
      transfers.push_back(transfer(out, g.label + " reduce-scatter chunk",
                                   CollectiveKind::kSendRecv, bytes / t,
                                   {gemm, transfers.empty() ? start : transfers.back()}));
    }
    w.linear_gemm(g.m / t, g.n, g.k);
    gemm = block(w, out, g.label + " chunk", {gemm});
    w.memory(bytes + bytes / t);  // reduce_partials
    std::vector<int> after{gemm};
    if (!transfers.empty()) after.push_back(transfers.back());
    block(w, out, g.label + " reduce partials", after);
    return;
  }
  // Userbuffers' pipeline (split_overlap_rs): num_splits GEMM chunks on sm_count - num_sm SMs,
  // each chunk's output reduce-scattered on the comm SMs once it is computed.
  const double splits = kUbPipelineSplits;
  int gemm = start, rs = start;
  for (int i = 0; i < kUbPipelineSplits; ++i) {
    w.linear_gemm(g.m / splits, g.n, g.k, 1, o.margin_slowdown());
    gemm = block(w, out, g.label + " chunk", {gemm});
    rs = transfer(out, g.label + " reduce-scatter chunk", CollectiveKind::kReduceScatter,
                  bytes / splits, {gemm, rs});
  }
}

void column_backward(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                     const std::string& opened, const OverlapGemm& g, double rs_bytes,
                     double ag_bytes) {
  if (o.mode == TpCommOverlap::kAsyncTp) {
    // dX = dY W^T fused with its reduce-scatter (fused_matmul_reduce_scatter), then dW; the
    // gathered input wgrad reads was kept from the forward's fused all-gather (ag_out).
    gemm_reduce_scatter(w, o, out, opened, OverlapGemm{g.m, g.k, g.n, g.label + " dgrad"},
                        rs_bytes);
    w.linear_wgrad(g.m, g.n, g.k);
    return;
  }
  // Userbuffers' bulk method: the input's all-gather under dgrad, dX's reduce-scatter under
  // wgrad, both GEMMs on sm_count - num_sm SMs.
  const double slow = o.margin_slowdown();
  const int start = open_block(w, out, opened);
  const int ag =
      transfer(out, g.label + " bulk all-gather", CollectiveKind::kAllGather, ag_bytes, {start});
  w.linear_dgrad(g.m, g.n, g.k, 1, slow);
  const int dgrad = block(w, out, g.label + " dgrad", {start});
  const int rs = transfer(out, g.label + " bulk reduce-scatter", CollectiveKind::kReduceScatter,
                          rs_bytes, {dgrad, ag});
  w.linear_wgrad(g.m, g.n, g.k, 1, slow);
  const int wgrad = block(w, out, g.label + " wgrad", {dgrad, ag});
  out.push_back(LayerStep{});  // what follows needs dX scattered and the wgrad done
  out.back().compute.label = g.label + " bulk join";
  out.back().after = {wgrad, rs};
}

}  // namespace parasim::strat::detail
