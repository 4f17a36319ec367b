#pragma once
// Internal to strategies/: the sequence-parallel all-gathers and reduce-scatters around a layer's
// GEMMs, chunked and overlapped with them (parallel.tp_comm_overlap; docs/tp-overlap.md). The
// layer program (layer_program.cpp) calls these instead of a whole collective followed (or
// preceded) by a whole GEMM; the steps form a small DAG (LayerStep::after), so the engine, not a
// formula, decides what overlaps: chunk i's transfer on the TP stream while chunk i-1's GEMM runs
// on the compute stream, each chunk's GEMM costed by the CostModel at its own (smaller) shape.
//
// The two mechanisms:
// - AsyncTP (torch.distributed._symmetric_memory, torch 2.15: _pipelined_all_gather_and_consume,
//   _pipelined_produce_and_all2all, reached by torchtitan's enable_async_tensor_parallel through
//   torch.compile's micro_pipeline_tp pass). tp chunks: the local shard's GEMM first, then each
//   of the tp - 1 remote shards copied from a peer's symmetric buffer (Tensor.copy_ between
//   peer-mapped device memory: a cudaMemcpyAsync, the copy engine, no SMs) and consumed.
//   All-gather: the local shard is first copied into this rank's symmetric buffer ("mv", on the
//   compute stream). Reduce-scatter: each chunk's partial product is written into the peer's
//   buffer by copy, and the tp partials are summed by one reduction kernel (reduce_partials).
// - Userbuffers (Transformer Engine, transformer_engine/pytorch/module/base.py initialize_ub,
//   and common/comm_gemm_overlap/comm_gemm_overlap.cpp, at commit d0067d0d), Megatron-LM's
//   --tp-comm-overlap with no --tp-comm-overlap-cfg: the default method of each GEMM:
//     ring_exchange  qkv_fprop, fc1_fprop (AG + GEMM), proj_dgrad, fc2_dgrad (AG of dY + dgrad):
//                    num_splits = tp, num_sm 1, set_sm_margin false, use_ce true (the ring's
//                    sends are copy-engine copies; the GEMMs keep every SM);
//     pipeline       proj_fprop, fc2_fprop (GEMM + RS): num_splits 4, num_sm 16, cga_size 2,
//                    set_sm_margin true (the GEMM chunks run on sm_count - 16 SMs,
//                    comm_gemm_overlap.cpp:143, _math_sms; the reduce-scatter kernels on those 16);
//     bulk           qkv_dgrad, fc1_dgrad (the whole AG of the layer's input for wgrad under the
//                    dgrad GEMM), qkv_wgrad, fc1_wgrad (the whole RS of dX under the wgrad GEMM):
//                    num_sm 16, cga_size 2, set_sm_margin true;
//     external       proj_wgrad, fc2_wgrad: after the ring's dgrad here (a simplification: TE
//                    may start them beside the ring).
//   A GEMM launched with a margin of m SMs out of S runs at (S - m) / S of its rate for its whole
//   duration (its CTAs fill S - m SMs): time x S / (S - m), 132 / 116 = 1.138 on an H100 SXM.
// The chunk transfers take no SMs from the GEMMs beside them (copy engine, or SMs the GEMMs were
// launched without), so they carry Group::copy_engine and the engine's generic overlap slowdown
// (cost_model.hpp, kDefaultComputeSlowdownWhenOverlapped) does not apply to them.
//
// Bytes: a chunked all-gather of an S-byte message (nccl-tests S, the gathered tensor) moves
// tp - 1 send-recv shifts of S / tp (async-tp, ring_exchange) and the local S / tp; a pipelined
// reduce-scatter of S moves num_splits reduce-scatters of S / num_splits; exact sums, tested.
// FP8 linears (training.fp8): every chunk's GEMM is the FP8 GEMM of its shape
// (StepWriter::linear_gemm); the caller writes the recipe's casts into the open block first
// (StepWriter::input_casts, gradient_casts), once for the whole tensor. Userbuffers with
// Transformer Engine's recipes rings the FP8 copy of the local shard, cast before the ring
// (Dims::gather_e: the AG's bytes; the layers in initialize_ub's all-gather list get FP8
// buffers), and reduce-scatters in 16 bits (the pipeline layers' fp8_buf is false by default);
// TE refuses blockwise scaling in userbuffers ("Unsupported quantizer for Userbuffers", base.py),
// and so does the registry. AsyncTP with torchao's float8: TpOverlap::fuses_all_gather.
// Context parallelism: torchtitan's block chunks its wqkv and wo around the context-parallel
// attention (torchtitan_block.cpp); Megatron's layer with cp is refused.
// Not modelled: atomic GEMMs, Megatron's layer with cp and MLA's attention (refused), the MoE
// block's own collectives (serial).

#include <string>
#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// Transformer Engine's defaults (base.py, initialize_ub, get_default_config).
inline constexpr int kUbCommSms = 16;        // num_sm of pipeline and bulk
inline constexpr int kUbPipelineSplits = 4;  // num_splits of pipeline

// Device memory of Transformer Engine's userbuffers, outside PyTorch's allocator (registered by
// register_user_buffer_collective, common/comm_gemm_overlap/comm_gemm_overlap.cpp), on each GPU
// of a scenario with tp_comm_overlap "userbuffers" (0 otherwise). Megatron's
// _initialize_tp_communicators (megatron/training/initialize.py, megatron-core 0.19.2) calls
// initialize_ub with shape [seq_length x micro_batch / cp, hidden] and one quantization mode, FP8
// with --fp8 (plus a 16-bit one when FP8 runs with bf16 first or last layers); per mode
// initialize_ub (module/base.py) adds one communicator for each of the 12 GEMMs of its methods
// (ring_exchange 4, pipeline 2, bulk 4, external 2), each with one buffer of that shape: uint8
// for the 8 all-gather layers in an FP8 mode (fp8_buf), the 16-bit dtype (bfloat16, the
// default) otherwise. The default methods hold no reduce-scatter ring, whose buffer would be
// (2 tp - 1) / tp of that. Not counted: the communicator's flags and its small LOCALSIZE region.
double userbuffers_bytes(const Scenario& sc);

// The factor a GEMM's time takes when launched beside a userbuffers kernel that holds
// `comm_sms` of the device's `sm_count` SMs (S / (S - m)); 1 when sm_count is unknown (0).
double sm_margin_slowdown(int sm_count, int comm_sms);

// A GEMM [m x n x k] (m the tokens, split into chunks along m) and how it is chunked.
struct OverlapGemm {
  double m = 0, n = 0, k = 0;
  std::string label;  // "qkv", "fc1", "proj", "fc2"
};

// The overlap in effect (Dims carries the scenario's choice and the device's SMs).
struct TpOverlap {
  TpCommOverlap mode = TpCommOverlap::kNone;
  int tp = 1;
  int sm_count = 0;
  bool fp8 = false;  // FP8 linears (training.fp8)
  bool on() const { return mode != TpCommOverlap::kNone && tp > 1; }
  // The GEMM + RS side is chunked whenever the overlap is on. The AG + GEMM side is not for
  // AsyncTP with FP8 linears: torchao casts the gathered 16-bit tensor, so torch's
  // micro-pipeline pass finds a cast, not a matmul, after the gather (micro_pipeline_tp.py,
  // _find_consumer_matmuls) and leaves the all-gather whole; the _scaled_mm before a
  // reduce-scatter is still fused (_find_producer_matmul).
  bool fuses_all_gather() const { return on() && !(mode == TpCommOverlap::kAsyncTp && fp8); }
  // The GEMM slowdown of userbuffers' pipeline and bulk methods (set_sm_margin), 1 otherwise.
  double margin_slowdown() const;
};
inline TpOverlap tp_overlap_of(const Dims& x) {
  return TpOverlap{x.sp ? x.tp_overlap : TpCommOverlap::kNone, static_cast<int>(x.t), x.sm_count,
                   x.fp8_linears};
}

// AG + GEMM (forward of a column-parallel linear; the dgrad of a row-parallel one, with
// `dgrad`: the GEMM is then [m x k] x [k x n]^T's transpose, written by the caller as n <-> k).
// Closes the writer's open block as `opened` first. `bytes`: the gathered tensor's bytes.
void all_gather_gemm(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                     const std::string& opened, const OverlapGemm& g, double bytes);
// GEMM + RS (forward of a row-parallel linear): the GEMM's rows in chunks, each chunk's output
// reduce-scattered while the next is computed. Closes `opened` first; `bytes`: the unscattered
// output's bytes (nccl-tests S).
void gemm_reduce_scatter(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                         const std::string& opened, const OverlapGemm& g, double bytes);
// Backward of a column-parallel linear [m x k] x [k x n]: dgrad then wgrad, with the
// reduce-scatter of dX (`rs_bytes`) and, for userbuffers' bulk method, the all-gather of the
// input wgrad needs (`ag_bytes`; the serial program leaves it out, layer_program.hpp).
// async-tp: dgrad + RS fused as gemm_reduce_scatter's chunks, wgrad after. userbuffers: the AG
// under dgrad, the RS under wgrad (bulk), both GEMMs at the SM margin.
void column_backward(StepWriter& w, const TpOverlap& o, std::vector<LayerStep>& out,
                     const std::string& opened, const OverlapGemm& g, double rs_bytes,
                     double ag_bytes);

}  // namespace parasim::strat::detail
