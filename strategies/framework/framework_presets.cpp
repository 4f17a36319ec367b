#include "strategies/framework/framework_presets.hpp"

#include <utility>

namespace parasim::strat {
namespace {

using sim::Time;

// Host costs per call (launch excluded: the device's kernel_launch_overhead is added per kernel).
// One set for the PyTorch eager eras these presets model; where a figure was measured it says
// so, the rest are inferences from the code (marked). Measured on hosts other than the runs'
// (DGX A100: AMD EPYC 7742), so they are defaults to calibrate, not truths.
FrameworkHostCosts eager_pytorch_costs() {
  FrameworkHostCosts h;
  // ~7 us per op with requires_grad=True, 5 us without (y = 2*x on a 1-element tensor, 1e6
  // iterations in 6.8 s): pytorch/pytorch#41383. Python + dispatcher + autograd recording.
  // Fitted on the development set (scripts/validation/fit_framework.py, docs/frameworks.md
  // "Fitting"): megatron-deepspeed's vTrain cases want 39 us (with collective_call 141 us), twice
  // the top of the published 5-25 us of host work per eager op (#41383; HTA's documentation,
  // 5-20 us per launch): implausible, not adopted; the sourced value stays.
  h.forward_op = Time::us(7);
  h.forward_op_no_grad = Time::us(5);
  // ~1 us for an op through the C++ API (ngimel, pytorch/pytorch#41383) + ~1 us of the autograd
  // engine's bookkeeping per node [inference]: backward kernels of native ops run no Python.
  h.backward_op = Time::us(2);
  // ~2 us for a Python-level op without autograd, about half of it argument parsing (ngimel,
  // pytorch/pytorch#41383).
  h.host_only_op = Time::us(2);
  // Custom autograd.Function apply: 20.7 us median vs 3.2 us calling the function directly, ~17 us
  // overhead (pytorch/pytorch#189573; 4.7 us on an H200 host with PyTorch 2.13 in the same
  // thread, a newer CPU and PyTorch than these eras').
  h.autograd_function = Time::us(17);
  // No published figure for a TorchScript call's dispatch: 15 us [inference, to calibrate].
  h.jit_call = Time::us(15);
  // No published figure for c10d's ProcessGroupNCCL call (event record, stream wait, NCCL
  // enqueue): 15 us [inference, to calibrate].
  h.collective_call = Time::us(15);
  // A small device-to-host copy with its sync on a quiet stream, 0.012 ms (nnstreamer/nnstreamer
  // #4623, libtorch): the round trip after the drain.
  h.sync = Time::us(12);
  // A whole loss.backward() of a 2-op graph costs 120-140 us (pytorch/pytorch PR #63619); a
  // checkpointed layer's nested autograd.backward plus its RNG state swaps (host-only:
  // CUDAGeneratorImpl::get_state builds a CPU tensor) is put at 50 us [inference].
  h.checkpointed_layer = Time::us(50);
  // Schedule loop, data iterator, get_batch's Python, loss bookkeeping [inference].
  h.micro_batch = Time::us(150);
  // train_step, the LR scheduler, logging bookkeeping [inference].
  h.step = Time::us(300);
  // torch.compile's host work (used only with training.framework.compile). Inductor's per-kernel
  // launch path (CachingAutotuner.run) measured at 9.1 us for a 19-argument kernel, of which the
  // driver's cuLaunchKernel is 3.0 us (GB200; meta-pytorch/tritonbench PR #1017): the launch is the
  // device's kernel_launch_overhead, so 6.1 us here. Extern kernels (the GEMMs, SDPA) are aten
  // calls from the same wrapper without autograd, ~5 us (pytorch/pytorch#41383): the same figure
  // is used for them, a simplification.
  h.compiled_kernel = Time::ns(6100);
  // One call of a compiled region end to end (Dynamo's guards, DeviceGuard, AOTAutograd's
  // runtime wrapper, the graph) with one 0-argument kernel: 44.3 us, less that kernel's 6.8 us
  // (tritonbench PR #1017); AOTAutograd's fixed overhead alone 34-39 us (pytorch/pytorch#122029).
  h.compiled_region_forward = Time::ns(37500);
  // Its backward runs without guards: the compiled autograd.Function's backward (autograd_function
  // above, 17 us) and the compiled graph's call, ~12 us less the per-kernel 6.5 us (the launch
  // stack in tritonbench PR #1016) [derived]: 22.5 us.
  h.compiled_region_backward = Time::ns(22500);
  return h;
}

// Megatron-LM 23.04 (2023-05) to core_v0.5.0 (2024-02) with --transformer-impl local: the layer
// of megatron/model/transformer.py, local DDP over a contiguous fp32 gradient buffer, gradient
// accumulation fused into the weight-gradient GEMM.
FrameworkSpec megatron_lm() {
  FrameworkSpec f;
  f.name = "megatron-lm";
  f.version = "Megatron-LM 23.04 .. core_v0.5.0, --transformer-impl local";
  f.host = eager_pytorch_costs();
  auto& c = f.counts;
  // Views, splits, torch.empty, the RNG tracker's fork (2 get + 2 set, host-only) per layer
  // forward [inference from megatron/model/transformer.py @23.04].
  c.layer_host_only_ops = 12;
  // 2 fused LayerNorms, FusedScaleMaskSoftmax, bias-GeLU, 4 tensor-parallel mappings and 4
  // LinearWithGradAccumulationAndAsyncCommunication (core/tensor_parallel/layers.py @23.04).
  c.layer_autograd_functions = 12;
  // 2 bias-dropout-add and 1 bias-GeLU TorchScript functions (nvFuser, megatron/initialize.py
  // L244 @23.04).
  c.layer_jit_calls = 3;
  c.layer_syncs = 0;  // none in the layer
  // Gradient accumulation fused into the wgrad GEMM (fused_weight_gradient_mlp_cuda, layers.py
  // L310, on by default): the 4 weights need no add; the 4 LayerNorm weights and biases and the
  // 4 linear biases are added into main_grad by its hook on every micro-batch.
  c.grad_accumulation = GradAccumulation::kFusedWeights;
  c.grad_accumulation_first_micro_batch = true;
  // get_ltor_masks_and_position_ids (tril, ones, arange, ...) and loss-mask kernels
  // [inference, megatron/utils.py @23.04].
  c.micro_batch_kernels = 8;
  // get_batch -> tensor_parallel.broadcast_data: torch.cuda.LongTensor(sizes) (a host-to-device
  // copy), sizes_cuda.cpu(), and the batch's pageable .cuda() on TP rank 0
  // (megatron/core/tensor_parallel/data.py L38, L43, L86 @23.04).
  c.forward_start_syncs = 3;
  // Since a0e190ca (2023-10-26, "Refactor dataset code and move to core"; in core_v0.5.0 and the
  // Zero Bubble fork) pretrain_gpt.get_batch returns at once on a stage that is neither the
  // first nor the last: no broadcast, no masks there. 23.04 .. 23.09 ran it on every stage
  // (override "micro_batch": {"batch_on_every_stage": true}).
  c.batch_on_every_stage = false;
  // _communicate ends with torch.cuda.synchronize() (core/pipeline_parallel/p2p_communication.py
  // L240 @23.04; kept under batch_p2p_sync=True, the default, in core_v0.5.0).
  c.p2p_syncs = 1;
  // Multi-tensor unscale-and-check, l2norm, scale, Adam and the main-to-model copy, a few
  // launches each [inference, apex multi_tensor_apply].
  c.step_kernels = 10;
  // found_inf.item() (optimizer/optimizer.py L401), total_norm.item() (clip_grads.py L95),
  // optimizer.get_loss_scale().item() (training.py L710), all @23.04.
  c.step_syncs = 3;
  // allreduce_gradients scales the contiguous buffer by 1/dp before the all-reduce
  // (model/distributed.py @23.04); the parameters' main_grad are views of it: nothing to copy.
  c.reduce_passes_before = 1;
  // fp32 main gradients: unscale in place (read + write, 8 B), their l2 norm (4), the copy of the
  // fp32 main parameters to the model's 16-bit ones (6) less the 2 B AdamW counts for it
  // [inference from optimizer/optimizer.py and clip_grads.py @23.04].
  c.step_bytes_per_parameter = 16;
  // The linear's forward is torch.matmul then `output + bias` (layers.py L243 @23.04): two
  // kernels. Bias-GeLU, bias-dropout-add and the masked softmax are fused by default (the
  // --no-*-fusion flags are store_false, arguments.py @23.04).
  f.fusions.linear_bias_in_gemm = false;
  // --DDP-impl local (arguments.py L947 @23.04) reduces the contiguous buffer after the
  // backward (on by default; --no-contiguous-buffers-in-local-ddp L951); core_v0.5.0's
  // --overlap-grad-reduce is off by default.
  f.gradient_reduction = GradientReduction::kAfterBackward;
  f.pipeline_transfers = PipelineTransfers::kHostSynchronized;
  return f;
}

// Megatron-LM v2.5 at de7dc40f88 (2021-08-10, "scripts for sc21"), the SC21 paper's runs
// (examples/sc21: nvcr.io/nvidia/pytorch:20.12-py3, --fp16 --loss-scale 8192, no
// --use-contiguous-buffers-in-ddp).
FrameworkSpec megatron_lm_2021() {
  FrameworkSpec f;
  f.name = "megatron-lm-2021";
  f.version = "Megatron-LM v2.5 de7dc40f88 (SC21 scripts, PyTorch 20.12 container)";
  f.host = eager_pytorch_costs();
  auto& c = f.counts;
  c.layer_host_only_ops = 12;  // as megatron-lm [inference]
  // 2 LayerNorms, the softmax, bias-GeLU and 4 tensor-parallel mappings (mpu/mappings.py).
  c.layer_autograd_functions = 8;
  c.layer_jit_calls = 3;  // legacy TorchScript fuser (model/transformer.py L31-34)
  // Without contiguous buffers the fp16 param.grad is accumulated by autograd: the first
  // micro-batch's gradient is stolen, every later one added (12 parameter tensors per layer).
  c.grad_accumulation = GradAccumulation::kAllTensors;
  c.grad_accumulation_first_micro_batch = false;
  c.micro_batch_kernels = 8;
  // Timers call torch.cuda.synchronize() in start() and stop() (global_vars.py L195, L202):
  // forward-compute start, batch-generator start and stop, and broadcast_data's 3 syncs
  // (mpu/data.py) before a forward's layers; forward-compute stop after; backward-compute
  // around a backward (schedules.py L53, L63, L79, L95).
  c.forward_start_syncs = 6;
  c.forward_end_syncs = 1;
  c.backward_start_syncs = 1;
  c.backward_end_syncs = 1;
  // The p2p timers' start and stop and _communicate's torch.cuda.synchronize()
  // (p2p_communication.py L130).
  c.p2p_syncs = 3;
  c.step_kernels = 10;
  // The optimizer's 4 sub-timers and train_step's 3 timers (2 syncs each) and 2 .item()
  // [inference from optimizer.py and training.py @de7dc40f88].
  c.step_syncs = 16;
  // Float16OptimizerWithFloat16Params casts each fp16 gradient to its fp32 main parameter's grad
  // (optimizer/optimizer.py L309).
  c.step_kernels_per_tensor = 1;
  // allreduce_gradients without contiguous buffers: flatten per dtype and divide by dp, all-reduce,
  // copy back into every parameter's gradient (model/distributed.py L194, L214).
  c.reduce_passes_before = 2;
  c.reduce_copy_back = true;
  // The fp16 gradient cast to fp32 (6 B), unscale (8), l2 norm (4), copy back (6) less AdamW's 2
  // [inference from optimizer/optimizer.py @de7dc40f88].
  c.step_bytes_per_parameter = 22;
  // PyTorch 1.8 (20.12): F.linear on a 3-D input is matmul + add_ (pytorch/pytorch#39661; the
  // fused 3-D path is PR #72728, 2022-02).
  f.fusions.linear_bias_in_gemm = false;
  // --DDP-impl local is the default (arguments.py L578); the Table 1 runs up to 18B use torch
  // DDP (examples/sc21/run_table_1.sh: DDP=torch), which a scenario selects with
  // "gradient_reduction": "overlapped" and a 25 MB "gradient_bucket".
  f.gradient_reduction = GradientReduction::kAfterBackward;
  f.pipeline_transfers = PipelineTransfers::kHostSynchronized;
  return f;
}

// DeepSpeed ZeRO-3 (deepspeed/runtime/zero/, read at v0.14.4 d254d75e; the coordinator has the
// same shape since its rewrite in PR #1453, v0.6.0, 2022; 2021's is deepspeed_2021_zero3 below):
// hooks on every submodule (parameter_offload.py L262-275) fetch its partitioned parameters before
// its forward and again before its backward, on every micro-batch (the coordinator's trace resets
// after each backward, stage3.py L2196-2215), as one coalesced all_gather_into_tensor per fetch
// (partition_parameters.py L1145-1178); the prefetch of the next modules in trace order is one more
// such call per fetch, so the calls per pass are about one per partitioned submodule. Tensors of at
// most stage3_param_persistence_threshold = 1e5 elements (zero/config.py L201) stay whole on every
// rank (parameter_offload.py L242-260).
//
// What stays gathered (zero3_resident.hpp): partitioned_param_coordinator.py fetch_sub_module
// (L354-L378: prefetch while the elements prefetched stay below min(max live - available,
// prefetch bucket)) and __params_to_release (L488-L518: a module used again within the reuse
// distance, or whose later use the prefetcher passed over, stays gathered), with zero/config.py's
// defaults: stage3_prefetch_bucket_size 5e7 (L195), stage3_max_live_parameters 1e9 (L218),
// stage3_max_reuse_distance 1e9 (L224); and the gradient bucket stage3.py allocates once with
// contiguous_gradients (on by default, config.py L95): torch.empty(reduce_bucket_size) in the
// training dtype (stage3.py L489-L491); reduce_bucket_size is the preset's 5e8-element
// gradient bucket (config.py L106).
Zero3Gathering deepspeed_zero3() {
  Zero3Gathering z;
  z.unit = Zero3Gather::kPerModule;
  z.persistence_threshold = 1e5;
  z.prefetch_bucket_size = 5e7;
  z.max_live_parameters = 1e9;
  z.max_reuse_distance = 1e9;
  z.contiguous_gradients = true;
  return z;
}

// DeepSpeed ZeRO-3 as 2021's releases ran it (v0.3.14 7b46d11f .. v0.5.10; the coordinator was
// rewritten in PR #1453, released in v0.6.0, 2022-03), read at v0.5.0 f2843244
// (deepspeed/runtime/zero/stage3.py S3, partition_parameters.py PP; the same code at v0.3.16
// and v0.4.0):
//   - hooks on every submodule fetch its partitioned parameters before its forward and its
//     backward and release them after (S3 L1432-1598); tensors of at most 1e5 elements stay whole
//     (constants.py L111-112): per module, as today's preset;
//   - the PrefetchCoordinator's trace check fails on every module since v0.3.14 (the sub-module
//     pre-hook that advances step_id is registered before the one that resets it, S3 L1396 /
//     L1410; DeepSpeed issue #1069): no prefetch and no reuse, every fetch released after use,
//     so with full recompute each weight is gathered in the forward, the rerun and the backward;
//   - a fetch is one all_gather per parameter in list form: torch.cuda.synchronize() before it
//     (PP L845), a Python loop over the world size building one narrow view per rank (PP
//     L857-861), then _synchronize_communication waits on the handle, comm_stream.synchronize()
//     and torch.cuda.synchronize() (S3 L533-544);
//   - gradients: one reduce_scatter per parameter (PP L934-963), the host waiting on the
//     reduction stream when a new bucket starts (S3 L2195).
// Not modelled: the zero-fill, the list all_gather's per-rank copy-out and the debug norm each
// fetch also runs on the GPU (PP L838, c10d's allgather post hook, S3 L453-457), and the
// per-rank copies before each reduce-scatter.
Zero3Gathering deepspeed_2021_zero3() {
  Zero3Gathering z = deepspeed_zero3();
  z.prefetch_bucket_size = 0;  // nothing prefetched, nothing kept for reuse (zero3_resident)
  z.max_reuse_distance = 0;
  z.prefetch = false;
  z.blocking_fetch = true;
  z.regather_for_recompute = true;
  z.reduce_per_unit = true;
  return z;
}

// microsoft/Megatron-DeepSpeed c2402048 (2022-12-23) .. f01c9e6e (2023-06-30) with DeepSpeed
// v0.8.3: GPTModelPipe on DeepSpeed's PipelineEngine (also at pp 1, unless
// --no-pipeline-parallel: megatron/arguments.py L63), ZeRO-0, FP16_Optimizer, DeepSpeed's
// activation checkpointing.
FrameworkSpec megatron_deepspeed() {
  FrameworkSpec f;
  f.name = "megatron-deepspeed";
  f.version =
      "Megatron-DeepSpeed c2402048..f01c9e6e on DeepSpeed v0.8.3 (pipeline engine, "
      "ZeRO-0, fp16)";
  f.host = eager_pytorch_costs();
  auto& c = f.counts;
  c.layer_host_only_ops = 12;      // [inference from megatron/model/transformer.py @c2402048]
  c.layer_autograd_functions = 8;  // 2 LayerNorms, softmax, GeLU, 4 TP mappings
  c.layer_jit_calls = 3;           // legacy TorchScript fuser (transformer.py L33-36)
  // moe_loss = torch.tensor(0.0, device=...) and mlp_bias = torch.tensor(0.0, device=...) before
  // the MLP, also without MoE (transformer.py L536-537 @c2402048; L1319-1320 @4822c87e): pageable
  // host-to-device copies, each a cudaMemcpyAsync + cudaStreamSynchronize (pytorch
  // aten/src/ATen/native/cuda/Copy.cu; pytorch/pytorch#120996 shows torch.tensor(3.14, device=dev)
  // flagged as a synchronizing operation).
  c.layer_syncs = 2;
  // fp16 param.grad accumulated by autograd on every micro-batch after the first.
  c.grad_accumulation = GradAccumulation::kAllTensors;
  c.grad_accumulation_first_micro_batch = false;
  c.micro_batch_kernels = 8;
  // broadcast_data in get_batch (megatron/mpu/data.py L49, L54, L97 @c2402048).
  c.forward_start_syncs = 3;
  // get_batch_pipe runs in the pipeline engine's LoadMicroBatch, which TrainSchedule issues on
  // the first and last stage only (deepspeed/runtime/pipe/schedule.py, TrainSchedule.steps,
  // @v0.8.3). (ThroughputTimer.start() in _exec_forward_pass does not sync there: the pipeline
  // engine steps through _take_model_step, never tput_timer.stop(global_step=True), so its
  // global_step_count stays below start_step; pipe/engine.py L631, L1160, utils/timer.py.)
  c.batch_on_every_stage = false;
  c.p2p_syncs = 0;  // stream-ordered transfers, below
  // FP16_Optimizer.step (deepspeed/runtime/fp16/fused_optimizer.py @v0.8.3): each parameter's
  // gradient cast to fp32 (L279) and the updated fp16 parameter copied back (L319); the flat
  // groups' norm, unscale, Adam.
  c.step_kernels = 10;
  c.step_kernels_per_tensor = 2;
  // has_overflow_serial: float(x.float().sum()) per gradient (runtime/utils.py L231, L286), one
  // sync each (2 kernels each, host_plan.hpp); then the overflow flag's ByteTensor and .item(),
  // the norms' .item() and FloatTensor (utils.py L395-440), and the pipeline engine's loss
  // aggregation (pipe/engine.py L552: 2 device-to-host reads and a host-to-device copy).
  c.step_syncs = 9;
  c.fp16_step_syncs_per_tensor = 1;
  // buffered_allreduce_fallback: flatten, mul_(1/dp), all-reduce, then buf.copy_(synced) for
  // every gradient (runtime/engine.py L2357-2387 @v0.8.3).
  c.reduce_passes_before = 2;
  c.reduce_copy_back = true;
  // The gradient cast to fp32 (6 B) and the fp16 copy back (6) less AdamW's 2 (the overflow
  // check's own pass is costed from the precision, host_plan.hpp) [inference from
  // fused_optimizer.py @v0.8.3].
  c.step_bytes_per_parameter = 10;
  // Fusions on by default (arguments.py L459-469 @c2402048). PyTorch >= 1.12 runs F.linear's
  // bias in the cuBLASLt epilogue (aten/src/ATen/native/cuda/Blas.cpp, useLtInterface); vTrain's
  // environment for these runs is PyTorch 2.0.1 (VIA-Research/vTrain docker/Dockerfile).
  f.fusions.linear_bias_in_gemm = true;
  // The pipeline engine reduces gradients only at ReduceGrads, after the last backward
  // (pipe/engine.py L66, L72), with buffered_allreduce_fallback in buckets of 5e8 elements
  // (MEMORY_OPT_ALLREDUCE_SIZE, runtime/engine.py L100).
  f.gradient_reduction = GradientReduction::kAfterBackward;
  f.gradient_bucket_elements = 5e8;
  // p2p.send / p2p.recv are dist.send / dist.recv on torch >= 1.8 (pipe/p2p.py L24, L63, L84):
  // on NCCL they order the compute stream after the transfer, the host is not blocked
  // [inference from ProcessGroupNCCL's wait semantics].
  f.pipeline_transfers = PipelineTransfers::kStreamOrdered;
  f.zero3 = deepspeed_zero3();
  return f;
}

// DeepSpeed's engine around a model of PyTorch modules (no Megatron layer): no custom autograd
// functions or TorchScript in the layer, nothing fused; ZeRO-0 fp16 as above.
FrameworkSpec deepspeed() {
  FrameworkSpec f = megatron_deepspeed();
  f.name = "deepspeed";
  f.version = "DeepSpeed v0.8.3 engine, ZeRO-0 fp16, eager PyTorch modules";
  f.counts.layer_host_only_ops = 12;  // [inference]
  f.counts.layer_autograd_functions = 0;
  f.counts.layer_jit_calls = 0;
  f.counts.layer_syncs = 0;
  f.counts.forward_start_syncs = 1;      // ThroughputTimer.start() (runtime/engine.py L1841)
  f.counts.batch_on_every_stage = true;  // the engine's forward on every stage (no pipe engine)
  f.counts.step_syncs = 7;               // the fp16 optimizer's 6 and ThroughputTimer.stop()
  f.fusions = KernelFusions{false, false, false, true};
  f.gradient_reduction = GradientReduction::kAfterBackward;  // allreduce_gradients at the boundary
  return f;
}

// DeepSpeed's engine of 2021 around plain PyTorch modules, with 2021's ZeRO-3 (above); the
// engine's other host costs as `deepspeed`'s.
FrameworkSpec deepspeed_2021() {
  FrameworkSpec f = deepspeed();
  f.name = "deepspeed-2021";
  f.version = "DeepSpeed v0.3.14 .. v0.5.10 engine, ZeRO-3 before the coordinator rewrite";
  f.zero3 = deepspeed_2021_zero3();
  return f;
}

// pytorch/torchtitan 3f20451bc (2024-12-27): eager, FSDP2 with a per-layer reduce-scatter
// overlapped with the backward, no custom autograd functions in the model.
FrameworkSpec torchtitan() {
  FrameworkSpec f;
  f.name = "torchtitan";
  f.version = "torchtitan 3f20451bc host loop, FSDP2; block kernels of torchtitan 0.3.0";
  f.host = eager_pytorch_costs();
  auto& c = f.counts;
  c.layer_host_only_ops = 12;                     // [inference]
  c.grad_accumulation = GradAccumulation::kNone;  // FSDP2 reduce-scatters every micro-batch
  c.micro_batch_kernels = 2;
  // Clip-norm's .item() only when logged (train.py @3f20451bc) [inference]: one per step.
  c.step_kernels = 10;
  c.step_syncs = 1;
  c.reduce_passes_before = 0;      // FSDP2 reduce-scatters from its own flat buffers [inference]
  c.step_bytes_per_parameter = 4;  // clip_grad_norm_'s norm [inference]
  f.fusions = KernelFusions{false, false, false, true};
  f.gradient_reduction = GradientReduction::kOverlapped;
  f.gradient_bucket = cost::Bytes{0};
  f.pipeline_transfers = PipelineTransfers::kStreamOrdered;  // [inference]
  // Its blocks' kernels as torchtitan's eager Llama block issues them (torchtitan_block.hpp).
  f.kernels = LayerKernels::kTorchtitan;
  // run_train.sh launches with PYTORCH_ALLOC_CONF="expandable_segments:True"
  // (pytorch/torchtitan run_train.sh @0168bd51).
  f.allocator = AllocatorKind::kExpandableSegments;
  // torch.distributed.pipelining runs an OVERLAP_F_B action's forward, then its backward, unless
  // a custom function is registered (schedules.py @d0f2af8b, _PipelineScheduleRuntime);
  // torchtitan registers none.
  f.overlaps_forward_backward = false;
  return f;
}

// No framework overhead: a host that is never behind and never waits (every host cost and count
// 0), nothing accumulated or copied around the reduction, PyTorch DDP's overlapped 25 MB buckets
// (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb=25). What a kernel-level simulator
// such as vTrain replays (its profiled layer has no framework syncs, hooks or timers:
// VIA-Research/vTrain f8dda847), and what isolates the GPU-side mechanisms in tests.
FrameworkSpec ideal() {
  FrameworkSpec f;
  f.name = "ideal";
  f.version = "no host overhead";
  f.counts.grad_accumulation = GradAccumulation::kNone;
  f.gradient_reduction = GradientReduction::kOverlapped;
  f.gradient_bucket = cost::Bytes{25e6};
  f.pipeline_transfers = PipelineTransfers::kStreamOrdered;
  return f;
}

FrameworkPreset preset(std::string description, std::string source, FrameworkSpec spec) {
  std::string name = spec.name;
  return FrameworkPreset{std::move(name), std::move(description), std::move(source),
                         std::move(spec)};
}

std::vector<FrameworkPreset> build_presets() {
  std::vector<FrameworkPreset> p;
  p.push_back(
      preset("Megatron-LM 2023-24 (default): local layer, local DDP after the backward, "
             "synchronized pipeline transfers",
             "github.com/NVIDIA/Megatron-LM tags 23.04, core_v0.5.0", megatron_lm()));
  p.push_back(preset("Megatron-LM 2021 (SC21): legacy fuser, synchronizing timers",
                     "github.com/NVIDIA/Megatron-LM de7dc40f88 (examples/sc21)",
                     megatron_lm_2021()));
  p.push_back(
      preset("Megatron-DeepSpeed 2022-23 on DeepSpeed's pipeline engine: two syncs per "
             "layer forward, per-tensor fp16 overflow check",
             "github.com/microsoft/Megatron-DeepSpeed c2402048, f01c9e6e; "
             "github.com/microsoft/DeepSpeed v0.8.3",
             megatron_deepspeed()));
  p.push_back(preset("DeepSpeed engine around plain PyTorch modules, nothing fused",
                     "github.com/microsoft/DeepSpeed v0.8.3", deepspeed()));
  p.push_back(
      preset("DeepSpeed of 2021 (v0.3.14 .. v0.5.10): ZeRO-3 gathers without prefetch, "
             "each waited for, per-rank host loops, one reduce-scatter per parameter",
             "github.com/microsoft/DeepSpeed v0.5.0 f2843244 (v0.3.16, v0.4.0)", deepspeed_2021()));
  p.push_back(
      preset("torchtitan, eager, FSDP2: its own Llama block's kernels (compile: "
             "Inductor's fused block)",
             "github.com/pytorch/torchtitan 3f20451bc", torchtitan()));
  p.push_back(
      preset("No framework overhead: a host that is never behind, no syncs, overlapped "
             "25 MB gradient buckets (kernel-level simulators; tests)",
             "github.com/VIA-Research/vTrain f8dda847 (what it replays); PyTorch DDP "
             "bucket_cap_mb",
             ideal()));
  return p;
}

}  // namespace

const char* grad_accumulation_name(GradAccumulation g) {
  switch (g) {
    case GradAccumulation::kAllTensors:
      return "all-tensors";
    case GradAccumulation::kFusedWeights:
      return "fused-weights";
    case GradAccumulation::kNone:
      return "none";
  }
  return "?";
}

const char* layer_kernels_name(LayerKernels k) {
  return k == LayerKernels::kTorchtitan ? "torchtitan" : "megatron";
}

const char* allocator_name(AllocatorKind a) {
  return a == AllocatorKind::kExpandableSegments ? "expandable-segments" : "caching";
}

const char* zero3_gather_name(Zero3Gather g) {
  return g == Zero3Gather::kPerModule ? "per-module" : "per-layer";
}

const char* gradient_reduction_name(GradientReduction g) {
  return g == GradientReduction::kOverlapped ? "overlapped" : "after-backward";
}

const char* pipeline_transfers_name(PipelineTransfers p) {
  return p == PipelineTransfers::kHostSynchronized ? "host-synchronized" : "stream-ordered";
}

const std::vector<FrameworkPreset>& framework_presets() {
  static const std::vector<FrameworkPreset> presets = build_presets();
  return presets;
}

const FrameworkPreset* find_framework_preset(std::string_view name) {
  for (const auto& p : framework_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const FrameworkSpec& default_framework() {
  static const FrameworkSpec spec = find_framework_preset(kDefaultFrameworkName)->spec;
  return spec;
}

}  // namespace parasim::strat
