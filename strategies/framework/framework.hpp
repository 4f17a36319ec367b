#pragma once
// parasim::strat::FrameworkSpec — the training framework that issues a step's kernels
// (`training.framework` in a scenario; docs/frameworks.md): the host costs of its Python loop,
// which kernels it fuses, where it makes the host wait for the GPU (syncs), how it reduces
// data-parallel gradients and how its pipeline transfers block. Presets with their sources are
// in framework_presets.hpp; the host costs are turned into host ops by host_plan.hpp and the
// workload builder.
//
// The host model (PyTorch eager; the research behind it is summarised in docs/frameworks.md):
// a step's kernels are launched one by one by a host thread. Launching a kernel costs the host
// the framework's per-op cost (Python, the dispatcher, autograd recording; `forward_op`,
// `forward_op_no_grad` under torch.no_grad, `backward_op` for the autograd engine's backward
// kernels) plus the CUDA launch call itself, the device's `kernel_launch_overhead`
// (DeviceSpec). Python work that launches nothing (views, RNG forks, tensor-parallel mappings at
// tp 1) costs `host_only_op`; a custom autograd.Function costs `autograd_function` on top of
// the ops it runs (forward, and again for its Python backward), a TorchScript call `jit_call`.
// A collective or point-to-point call costs `collective_call`. A sync (a value read back,
// torch.tensor(x, device=...), torch.cuda.synchronize) makes the host wait until the GPU has
// drained what it was given, then costs `sync`. The GPU runs a kernel no earlier than it has
// been launched; when the host is ahead, kernels follow each other with only the GPU-side gap
// (host_plan.hpp, kQueuedKernelGap). CUDA graphs (`cuda_graphs`) replay a captured pipeline item
// with one launch: no per-op host cost inside it, and no sync may be inside it.
//
// Units: every host cost is a sim::Time per call; counts are per call site as stated.
// Invariants (the parser checks them): every cost and count >= 0; with cuda_graphs, no syncs
// inside a layer.

#include <cstdint>
#include <string>

#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::strat {

// Host time of one call of each kind, the CUDA launch excluded (DeviceSpec::
// kernel_launch_overhead is added once per kernel).
struct FrameworkHostCosts {
  sim::Time forward_op;          // a kernel-launching op in a forward with autograd recording
  sim::Time forward_op_no_grad;  // the same under torch.no_grad (a checkpointed layer's 1st pass)
  sim::Time backward_op;         // one backward kernel issued by the autograd engine
  sim::Time host_only_op;        // an op that launches no kernel (view, split, RNG get/set)
  sim::Time autograd_function;   // extra per custom autograd.Function apply, and per its backward
  sim::Time jit_call;            // extra per TorchScript function call
  sim::Time collective_call;     // per collective or point-to-point call (c10d + NCCL enqueue)
  sim::Time sync;                // per sync, after the GPU has drained
  sim::Time checkpointed_layer;  // per checkpointed layer's backward (nested backward, RNG states)
  sim::Time micro_batch;         // per micro-batch: schedule loop, data iterator, get_batch
  sim::Time step;                // per step: train_step, LR scheduler, logging bookkeeping
  // torch.compile (TorchCompile below; docs/pytorch-native.md): inside a compiled region each
  // kernel costs the Inductor wrapper's per-kernel work instead of an eager op's; each call of a
  // region costs its fixed work (forward: Dynamo's guards, AOTAutograd's runtime wrapper, the
  // compiled graph's call; backward: the compiled autograd.Function's backward and the graph).
  sim::Time compiled_kernel;
  sim::Time compiled_region_forward;
  sim::Time compiled_region_backward;
};

// Which gradients get an add kernel per micro-batch (each parameter tensor of a layer: norms'
// weights and biases, the QKV, output-projection, fc1 and fc2 weights and, with linear biases,
// their biases; layer_program.hpp, layer_parameter_tensors).
enum class GradAccumulation : std::uint8_t {
  kAllTensors,    // autograd's AccumulateGrad into param.grad, or a main_grad hook per tensor
  kFusedWeights,  // the weight matrices accumulate inside their weight-gradient GEMM (Megatron's
                  // gradient-accumulation fusion): only norms and biases get an add
  kNone,          // nothing accumulated across micro-batches (FSDP reduces every micro-batch)
};
const char* grad_accumulation_name(GradAccumulation g);  // "all-tensors", "fused-weights", "none"

// Counts per call site. "Layer" counts are per transformer layer and per forward execution (a
// full recompute runs the forward again and repeats them), except where said.
struct FrameworkCounts {
  int layer_host_only_ops = 0;       // per forward execution
  int layer_autograd_functions = 0;  // applies per forward execution; their Python backwards once
                                     // per backward
  int layer_jit_calls = 0;           // TorchScript calls per forward execution
  int layer_syncs = 0;               // syncs per forward execution, before the MLP (Megatron-
                                     // DeepSpeed's two torch.tensor(0.0, device=...))
  // Gradient accumulation over micro-batches: which parameter tensors get an add kernel per
  // layer per micro-batch, and whether the step's first micro-batch adds too.
  GradAccumulation grad_accumulation = GradAccumulation::kAllTensors;
  bool grad_accumulation_first_micro_batch = false;
  int micro_batch_kernels = 0;  // data and mask kernels per micro-batch (host cost only)
  int forward_start_syncs = 0;  // at the start of each forward item (get_batch, timers)
  // Where a forward's get_batch work (micro_batch_kernels, forward_start_syncs) runs: on every
  // pipeline stage, or (false) only on the first and last virtual stage, the ones that read the
  // data (the micro-batch's host cost, FrameworkHostCosts::micro_batch, is paid everywhere).
  bool batch_on_every_stage = true;
  int forward_end_syncs = 0;  // at its end (timers)
  int backward_start_syncs = 0;
  int backward_end_syncs = 0;
  int p2p_syncs = 0;                   // per pipeline item that receives (torch.cuda.synchronize,
                                       // timers around the call)
  int step_kernels = 0;                // per step, fixed (multi-tensor launches, norms, casts)
  int step_kernels_per_tensor = 0;     // per parameter tensor of the stage
  int step_syncs = 0;                  // per step, fixed (.item() of norms, found_inf, loss scale)
  int fp16_step_syncs_per_tensor = 0;  // per parameter tensor, with fp16 training only (DeepSpeed's
                                       // dynamic-loss-scaling overflow check, 2 kernels each)
  // The data-parallel reduction's own kernels (when a stage has replicas): memory passes over a
  // bucket's gradients before its collective (flatten, 1/dp scaling), one kernel each, and
  // whether the reduced bucket is copied back into every parameter's gradient afterwards (one
  // kernel per tensor, one pass over the bucket in all).
  int reduce_passes_before = 0;
  bool reduce_copy_back = false;
  // Memory traffic of the optimizer step per updated parameter beyond AdamW's own 30 bytes
  // (optimizer_adamw.hpp): gradient casts, unscaling, norms, the copy back to the model's
  // parameters; in bytes.
  double step_bytes_per_parameter = 0;
};

// Kernels the framework fuses, where that changes the kernel count (layer_program.hpp).
struct KernelFusions {
  bool bias_gelu = true;            // --no-bias-gelu-fusion: bias add and GeLU apart
  bool bias_dropout_add = true;     // --no-bias-dropout-fusion: bias add, dropout, residual add
  bool masked_softmax = true;       // --no-masked-softmax-fusion: torch's mask and softmax
  bool linear_bias_in_gemm = true;  // a linear's bias in the GEMM's epilogue, or an add kernel
};

// When data-parallel gradients are reduced.
enum class GradientReduction : std::uint8_t {
  kOverlapped,     // PyTorch DDP: a bucket is reduced as soon as the last micro-batch's backward
                   // has produced its gradients
  kAfterBackward,  // Megatron's local DDP, DeepSpeed ZeRO-0/1/2 and its pipeline engine: after
                   // the whole backward of the step's last micro-batch
};

// What a pipeline point-to-point transfer does to the host.
enum class PipelineTransfers : std::uint8_t {
  kHostSynchronized,  // Megatron-LM: batch_isend_irecv, wait, torch.cuda.synchronize(): the host
                      // waits until its item's receive and its previous item's send are done
  kStreamOrdered,     // DeepSpeed's pipeline engine: dist.send / dist.recv on NCCL order the
                      // compute stream after the transfer; the host goes on
};

const char* gradient_reduction_name(GradientReduction g);  // "overlapped", "after-backward"
const char* pipeline_transfers_name(PipelineTransfers p);  // "host-synchronized", ...

// How ZeRO-3 brings a layer's sharded weights to a rank, before its forward and again before its
// backward, on every micro-batch (zero3_gather_units.hpp turns this into the all-gather calls).
enum class Zero3Gather : std::uint8_t {
  kPerLayer,   // one all-gather of the whole layer: FSDP / FSDP2 units wrapping each block
  kPerModule,  // DeepSpeed ZeRO-3: one coalesced all-gather per submodule whose parameters are
               // partitioned (partitioned_param_coordinator.py fetch_sub_module)
};
const char* zero3_gather_name(Zero3Gather g);  // "per-layer", "per-module"

struct Zero3Gathering {
  Zero3Gather unit = Zero3Gather::kPerLayer;
  // Parameter tensors of at most this many elements are kept whole on every rank and never
  // gathered (DeepSpeed's stage3_param_persistence_threshold); 0: every tensor is partitioned.
  double persistence_threshold = 0;
  // Per-module gathering only (zero3_resident.hpp), in elements, DeepSpeed's names: how far the
  // coordinator prefetches (stage3_prefetch_bucket_size), the most it keeps gathered before it
  // stops prefetching (stage3_max_live_parameters), and how close a module's next use must be
  // for it to stay gathered (stage3_max_reuse_distance).
  double prefetch_bucket_size = 0;
  double max_live_parameters = 0;
  double max_reuse_distance = 0;
  // ZeRO-3 copies gradients into one bucket buffer allocated once and kept for the run
  // (DeepSpeed's contiguous_gradients: a training-dtype buffer of reduce_bucket_size elements,
  // stage3.py; one layer's gradients, the unit ZeRO-3 reduce-scatters, as the DeepSpeed export
  // writes reduce_bucket_size).
  bool contiguous_gradients = false;
  // DeepSpeed's ZeRO-3 before its coordinator rewrite (v0.3.14 .. v0.5.10, 2021; replaced by PR
  // #1453 in v0.6.0), the `deepspeed-2021` preset
  // (docs/frameworks.md#zero-3-as-deepspeed-ran-it-in-2021):
  //   prefetch false: the coordinator's trace check fails on every module (DeepSpeed issue #1069),
  //     so nothing is prefetched: a layer's gathers start when the previous layer's work is done;
  //   blocking_fetch true: each gather is one all_gather per parameter in list form: the host
  //     builds one view per rank (one host-only op per rank) before issuing it, and waits for it
  //     (comm_stream.synchronize(), torch.cuda.synchronize(): 2 syncs); each reduce-scatter is
  //     waited for when the next one is bucketed (1 sync);
  //   regather_for_recompute true: every fetch is released after its use, so under full
  //     recompute a layer is gathered three times per micro-batch (forward, rerun, backward);
  //   reduce_per_unit true: one reduce-scatter per partitioned parameter instead of one per
  //     layer.
  bool prefetch = true;
  bool blocking_fetch = false;
  bool regather_for_recompute = false;
  bool reduce_per_unit = false;
};

// Whose transformer block the framework runs (layer_program.hpp): Megatron-LM's fused layer, or
// torchtitan's eager Llama block (torchtitan_block.hpp: fused QKV GEMM and its split copies,
// complex RoPE, separate w1 / w3 GEMMs, silu and mul, torch's fused RMSNorm, residual adds apart).
enum class LayerKernels : std::uint8_t { kMegatron, kTorchtitan };
const char* layer_kernels_name(LayerKernels k);  // "megatron", "torchtitan"

// torch.compile as torchtitan applies it ([compile] enable, components; torchtitan 0.3.0
// distributed/compile.py apply_compile: each TransformerBlock compiled on its own, fullgraph,
// backend inductor). "model": the blocks run Inductor's fused kernels (torchtitan_block.hpp) and
// their host work is the compiled wrapper's (FrameworkHostCosts::compiled_*); "loss": the loss
// function compiled (the scenario's head keeps its eager kernels: a simplification, documented).
// Only with torchtitan's block (LayerKernels::kTorchtitan; the parser refuses it otherwise).
struct TorchCompile {
  bool enabled = false;
  bool model = true;  // components contain "model"
  bool loss = true;   // components contain "loss"
  bool compiles_blocks() const { return enabled && model; }
};

// PyTorch's CUDA caching allocator mode (PYTORCH_CUDA_ALLOC_CONF; costmodel/caching_allocator.hpp):
// segments cudaMalloc'ed per request size class, or expandable_segments:True (one growing segment
// per stream and pool, mapped page by page).
enum class AllocatorKind : std::uint8_t { kCaching, kExpandableSegments };
const char* allocator_name(AllocatorKind a);  // "caching", "expandable-segments"

struct FrameworkSpec {
  std::string name;     // the preset's name, or "custom"
  std::string version;  // the code it models ("Megatron-LM 23.04 ...")
  FrameworkHostCosts host;
  FrameworkCounts counts;
  KernelFusions fusions;
  GradientReduction gradient_reduction = GradientReduction::kAfterBackward;
  // Bucket of the data-parallel reduction: `gradient_bucket_elements` gradients when > 0
  // (DeepSpeed counts elements), else `gradient_bucket` bytes; 0 bytes: all gradients of a stage
  // in one bucket (Megatron's contiguous gradient buffer). A scenario's parallel.dp_bucket, when
  // given, replaces both.
  cost::Bytes gradient_bucket{0};
  double gradient_bucket_elements = 0;
  PipelineTransfers pipeline_transfers = PipelineTransfers::kHostSynchronized;
  bool cuda_graphs = false;  // each pipeline item replayed as one CUDA graph
  LayerKernels kernels = LayerKernels::kMegatron;
  TorchCompile compile;  // training.framework.compile
  Zero3Gathering zero3;  // with parallel.zero_stage 3
  // The allocator mode its launcher sets (a scenario's training.allocator overrides it).
  AllocatorKind allocator = AllocatorKind::kCaching;
  // dualpipev's forward-backward pairs overlapped (DeepSeek's DualPipe) or run in sequence
  // (torchtitan: PyTorch's OVERLAP_F_B action without a registered custom function); a
  // scenario's parallel.overlap_forward_backward overrides it.
  bool overlaps_forward_backward = true;
};

}  // namespace parasim::strat
