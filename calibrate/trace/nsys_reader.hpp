#pragma once
// parasim::calib::trace Nsight Systems reader — an `nsys export --type sqlite` file: the kernels
// (CUPTI_ACTIVITY_KIND_KERNEL, names from StringIds), copies (CUPTI_ACTIVITY_KIND_MEMCPY,
// _MEMSET), launches (CUPTI_ACTIVITY_KIND_RUNTIME: correlationId -> the launching thread and
// time, and the launch's host time) and NVTX ranges (NVTX_EVENTS, push/pop and start/end) as the
// ops. PyTorch's torch.autograd.profiler.emit_nvtx(record_shapes=True) names its ranges
// "aten::mm, seq = 12, sizes = [[8192, 4096], [4096, 4096]]": the op name and the input shapes
// come from that text. A kernel's launching op is the innermost NVTX range open on the
// launching thread at the launch. The GPU's name comes from TARGET_INFO_GPU (or
// TARGET_INFO_CUDA_DEVICE). NCCL kernels are classified by name; their sizes are not read (the
// export keeps NCCL's NVTX payloads in schema tables this reader does not decode), so they are
// counted in the coverage but not fitted.
// One RankTrace per process that ran kernels, ranks numbered in process-id order.

#include <string>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"
#include "costmodel/diagnostics.hpp"

namespace parasim::calib::trace {

// True when the file starts with SQLite's header ("SQLite format 3\0").
bool looks_like_sqlite(const std::string& path);

std::vector<RankTrace> read_nsys_export(const std::string& path, cost::Diagnostics& diagnostics);

// "aten::mm, seq = 12, sizes = [[8, 4], [4, 2]]" -> name "aten::mm", dims {{8, 4}, {4, 2}};
// a text without sizes keeps its whole first field as the name.
TraceOp parse_nvtx_op(const std::string& text);

}  // namespace parasim::calib::trace
