#pragma once
// parasim::calib::trace — one rank's profiled training steps, as read from a PyTorch profiler
// (Kineto) trace or an Nsight Systems SQLite export, in the form the trace import works on
// (calibrate --from-trace, compare-trace; docs/calibration.md#from-a-trace).
//
// Units: times in microseconds from the trace's own clock (Kineto's "ts"/"dur", Nsight's
// nanoseconds / 1000); sizes in elements as the trace records them.
// Invariants (kept by the readers): kernels sorted by (start, stream, name); every kernel's
// duration >= 0; launch_op indexes `ops` or is -1; an op's phase is the phase of the outermost
// phase marker above it on its thread (op_nesting.hpp); kernels outside the profiled steps are
// dropped when the trace marks steps (ProfilerStep#N), kept otherwise (steps = 0).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/hardware.hpp"

namespace parasim::calib::trace {

// What a kernel is to parasim's cost model (kernel_classes.hpp classifies by name).
enum class KernelClass : std::uint8_t {
  kGemm,         // cuBLAS / cuBLASLt / CUTLASS matrix multiplies (and their split-K reductions)
  kAttention,    // fused attention: FlashAttention, cuDNN SDPA, memory-efficient attention
  kCollective,   // NCCL kernels
  kMemoryBound,  // elementwise, reductions, norms, softmax, optimizer multi-tensor kernels, copies
                 // by kernel, Triton pointwise / reduction kernels
  kConvolution,  // cuDNN convolutions: no parasim op kind (transformers have none)
  kCopy,         // memcpy / memset by the copy engines (Kineto gpu_memcpy, gpu_memset)
  kOther,        // none of the above: listed by name in the coverage report
};
inline constexpr int kKernelClasses = 7;
// "gemm", "attention", "collective", "memory-bound", "convolution", "copy", "other".
const char* kernel_class_name(KernelClass c);

// The part of the step an op (and the kernels it launches) belongs to.
enum class TracePhase : std::uint8_t { kForward, kBackward, kOptimizer };
inline constexpr int kTracePhases = 3;
// "forward", "backward", "optimizer".
const char* trace_phase_name(TracePhase p);

// A collective as the profiler's collective metadata records it (PyTorch's record_param_comms:
// "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "Process Group
// Name", "Process Group Ranks").
struct TraceCollective {
  cost::CollectiveKind kind = cost::CollectiveKind::kAllReduce;
  std::int64_t in_elements = 0;
  std::int64_t out_elements = 0;
  int element_bytes = 0;  // 0 when the dtype is not one the reader knows
  int group_size = 0;
  std::string group;       // the process group's name ("" when not recorded)
  std::vector<int> ranks;  // the group's global ranks, when recorded
  // nccl-tests' message size S (collective_cost.hpp): bytes per rank for all-reduce, broadcast
  // and send/recv, the whole gathered buffer for all-gather, reduce-scatter and all-to-all.
  double message_bytes() const;
};

struct TraceOp {
  std::string name;                                   // "aten::mm", "AddmmBackward0", ...
  std::vector<std::vector<std::int64_t>> input_dims;  // record_shapes' "Input Dims"
  std::vector<std::string> input_types;               // record_shapes' "Input type"
  std::int64_t thread = 0;
  double start_us = 0;
  double end_us = 0;
  TracePhase phase = TracePhase::kForward;
};

struct TraceKernel {
  std::string name;
  std::int64_t stream = 0;
  double start_us = 0;
  double duration_us = 0;
  KernelClass kind = KernelClass::kOther;
  std::int64_t launch_op = -1;  // the innermost op that launched it, an index into ops
  TracePhase phase = TracePhase::kForward;
  std::optional<TraceCollective> collective;  // NCCL kernels with the profiler's metadata

  double end_us() const { return start_us + duration_us; }
};

struct RankTrace {
  std::string file;
  std::string format;       // "kineto" or "nsys"
  int rank = 0;             // distributedInfo.rank (0 without)
  int world_size = 1;       // distributedInfo.world_size (1 without)
  std::string device;       // the GPU's name, "" when the trace does not say
  int visible_devices = 0;  // GPUs the process saw (deviceProperties), 0 when not recorded
  int steps = 0;            // ProfilerStep#N marks found (0: none; the whole trace is used)
  std::vector<TraceOp> ops;
  std::vector<TraceKernel> kernels;
  std::vector<double> launch_call_us;  // duration of each kernel launch call (cudaLaunchKernel ...)
  std::optional<std::int64_t> base_time_ns;  // the trace's epoch (Kineto baseTimeNanoseconds)
  std::vector<std::string> notes;  // what the reader read differently or left out, for the user

  // The span of the kernels (first start to last end), 0 when there is none.
  double gpu_window_us() const;
};

}  // namespace parasim::calib::trace
