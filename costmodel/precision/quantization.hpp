#pragma once
// parasim::cost FP8 scaling recipes — what a linear layer's FP8 GEMMs cost beside the GEMMs: the
// memory-bound kernels that quantise its operands, the bytes it saves for the backward, the FP8
// weight copies it keeps, and the GEMM rate of the recipe's kernel.
//
// A linear y = x W^T runs three GEMMs (fprop x.W, dgrad dy.W, wgrad dy^T.x), each on quantised
// operands: the input x [tokens x in], the weight W [out x in], the output gradient dy
// [tokens x out]. Every operand is needed row-wise (fprop / dgrad) and column-wise (dgrad /
// wgrad) (Transformer Engine docs, features/low_precision_training/performance_considerations.rst
// "three GEMMs", TE @ d0067d0d). Bytes below: E elements of a bf16 tensor read as 2E; an FP8
// copy written as E (1 + s), s the recipe's scale bytes per element.
//
// Recipes (Megatron-core 0.19.2 --fp8-recipe builds the TE ones, core/fp8_utils.py
// get_fp8_recipe; torchtitan's float8 converters build the torchao ones):
//   delayed     TE DelayedScaling: per-tensor scale from the amax history, so one cast kernel reads
//               the tensor once and writes the FP8 copy, with its transpose where the GEMM needs
//               it (TE's fused cast_transpose; Hopper only, architecture.hpp):
//               2E + E (+ E). fp8_delayed_scaling.rst.
//   tensorwise  TE Float8CurrentScaling: the current tensor's amax first (one read, 2E), then the
//               scaled cast (+ transpose): 2E, 2E + E (+ E). fp8_current_scaling.rst ("reads the
//               tensor twice").
//   blockwise   TE Float8BlockScaling (DeepSeek-V3's 1x128 activations, 128x128 weights): a 1x128
//               copy cannot be transposed, so the row-wise and column-wise copies are both
//               quantised from bf16, one kernel writing both: 2E + 2E (1 + 4/128) (fp32 scale per
//               128). fp8_blockwise_scaling.rst.
//   mxfp8       TE MXFP8BlockScaling (Blackwell): both copies quantised from bf16 with one E8M0
//               scale per 32: 2E + 2E (1 + 1/32); the scale swizzle fused. mxfp8.rst.
//   torchao-tensorwise  torchao Float8Linear, dynamic per-tensor scales (torchtitan's float8
//               converter without recipe_name): per operand an amax read (2E), its second-stage
//               reduction (a tiny kernel) and one cast writing both the dim-0 and dim-1 FP8 copies
//               (2E + 2E); the weight's forward and backward casts are apart (2W + W each).
//   torchao-rowwise     torchao Float8Linear "rowwise": per operand a kernel writing the dim-0 FP8
//               copy and a bf16 transpose (2E + E + 2E) and one casting the transpose (2E + E);
//               the weight: 2W + W forward, 2W + 2W and 2W + W backward.
//               Both torchao rows are torchao's own kernel model, torchao/testing/training/
//               roofline_utils.py (pytorch/ao @ 36027d82), which assumes torch.compile's fusions.
// Weights: TE quantises a weight on a step's first micro-batch and keeps the FP8 copy (and its
// transpose) for the others (is_first_microbatch, module/linear.py _fp8_workspaces); torchao
// casts it on every micro-batch and keeps nothing. Saved input: TE keeps the column-wise FP8
// input for wgrad (E (1 + s) instead of 2E, performance_considerations.rst); torchao keeps the
// bf16 input (float8_linear.py, matmul_with_hp_or_float8_args).
// GEMM rate relative to a per-tensor FP8 cuBLAS GEMM on the same device (kernel_efficiency's fp8
// ceiling is such a GEMM): MXFP8 6.812 / 7.161 = 0.951 (TE docs/examples/gemm_profiling, B300, the
// 12 GEMMs of a 5B layer pre-quantised, FP8 current scaling against MXFP8); blockwise on Hopper
// 0.983 (DeepGEMM's 1,358 TFLOP/s on H800 at 4096x7168x16384, deepseek-ai/DeepGEMM README, over
// 1979 TFLOP/s = 0.686, against cuBLASLt per-tensor 0.698 on H100, kernel_presets.cpp), on
// Blackwell TE runs it as MXFP8 (0.951); the others 1 (the same cuBLAS scaled GEMM; torchao
// rowwise's CUTLASS kernel has no published rate of its own, taken equal).
//
// Not modelled: the fusion of the input cast into TE's LayerNormLinear norm; the amax
// all-reduce of delayed scaling at each autocast exit and of current scaling before sequence-
// parallel gathers. (TE's FP8 sequence-parallel gathers are the layer programs': Dims::gather_e
// in strategies/layers/step_writer.hpp.)

#include <optional>
#include <string_view>
#include <vector>

#include "costmodel/precision/architecture.hpp"

namespace parasim::cost {

enum class QuantRecipe {
  kNone,  // 16/32-bit GEMMs
  kDelayed,
  kTensorwise,
  kBlockwise,
  kMxfp8,
  kTorchaoTensorwise,
  kTorchaoRowwise
};
inline constexpr QuantRecipe kAllQuantRecipes[] = {
    QuantRecipe::kDelayed, QuantRecipe::kTensorwise,        QuantRecipe::kBlockwise,
    QuantRecipe::kMxfp8,   QuantRecipe::kTorchaoTensorwise, QuantRecipe::kTorchaoRowwise};

// "none", "delayed", "tensorwise", "blockwise", "mxfp8", "torchao-tensorwise", "torchao-rowwise".
const char* quant_recipe_name(QuantRecipe r);
std::optional<QuantRecipe> parse_quant_recipe(std::string_view name);

enum class QuantLibrary { kTransformerEngine, kTorchao };

struct QuantRecipeInfo {
  QuantLibrary library = QuantLibrary::kTransformerEngine;
  double scale_bytes_per_element = 0;  // s: 0 per-tensor, 4/128 (1x128 fp32), 1/32 (E8M0 per 32)
  double weight_scale_bytes_per_element = 0;  // the weights': blockwise's 128x128 blocks 4/16384
  bool caches_weights = true;                 // FP8 weight kept across micro-batches (TE)
  bool saves_quantized_input = true;          // wgrad's input saved in FP8 (TE) or bf16 (torchao)
  bool per_tensor = true;               // one scale per tensor (transposable; Hopper transposes)
  bool needs_blackwell_blocks = false;  // MXFP8: block-scaled tensor cores
};
QuantRecipeInfo quant_recipe_info(QuantRecipe r);

// Why `r` cannot run on `a`, or std::nullopt.
std::optional<std::string_view> quant_recipe_refusal(QuantRecipe r, Architecture a);

// GEMM throughput of the recipe's kernel relative to per-tensor FP8 cuBLAS (> 0, <= 1).
double quant_gemm_rate(QuantRecipe r, Architecture a);

// The memory-bound kernels one linear adds, as the bytes each moves (reads + writes), one entry
// per kernel. `tokens`, `out_features`, `in_features`: the GEMM of this rank (m, n, k); `batch`
// GEMMs of that shape (a grouped GEMM's experts: `tokens` rows each), each operand quantised by
// one kernel for the whole group (TE's GroupedLinear multi-tensor quantise).
struct LinearQuantKernels {
  std::vector<double> forward;   // every micro-batch's forward (input; torchao: weight too)
  std::vector<double> backward;  // every micro-batch's backward (output gradient; torchao: weight)
  std::vector<double> per_step;  // once a step (TE: the weight, on the first micro-batch)
};
// `fp8_params` (training.fp8.param_gather): the weights are FP8 parameters, cast once a step
// into the copies the GEMMs keep (one per-tensor copy: Megatron keeps no transpose cache without
// --keep-fp8-transpose-cache, so where the GEMM needs one each backward makes it, read + write).
LinearQuantKernels linear_quant_kernels(QuantRecipe r, Architecture a, double tokens,
                                        double out_features, double in_features, double batch = 1,
                                        bool fp8_params = false);

// Bytes per element of the input a linear saves for its wgrad: 1 + s (TE), 2 (torchao, bf16).
double saved_linear_input_bytes(QuantRecipe r);
// Bytes of the FP8 weight copies kept across micro-batches, per weight element: 0 (torchao);
// TE: (1 + s) per copy, two copies where the column-wise one is a separate tensor (Hopper's
// transpose, and the block-scaled recipes everywhere), one on Blackwell per-tensor.
double cached_weight_bytes_per_element(QuantRecipe r, Architecture a);
// With FP8 parameters (training.fp8.param_gather), bytes per weight element they take in place of
// the 16-bit parameter: TE's copies as linear_quant_kernels keeps them (one per-tensor copy, both
// block-scaled ones); torchao's FSDP keeps its shards in 16 bits (returns 2) and casts for the
// gather only.
double fp8_parameter_bytes_per_element(QuantRecipe r, Architecture a);

}  // namespace parasim::cost
