#pragma once
// parasim::calib::trace Kineto reader — a PyTorch profiler trace
// (torch.profiler.profile(...).export_chrome_trace, or tensorboard_trace_handler) as written by
// libkineto's output_json.cpp: {"traceEvents": [...], "deviceProperties": [...],
// "distributedInfo": {...}, "baseTimeNanoseconds": N}.
// Read: complete events ("ph": "X") of categories kernel, gpu_memcpy, gpu_memset (the GPU),
// cpu_op and user_annotation (the ops, with record_shapes' "Input Dims" / "Input type"), and
// cuda_runtime / cuda_driver (kernel launches: correlation -> external id, launch time). The
// capitalised categories of 2020-21 traces ("Kernel", "Operator", "Runtime", "Memcpy") too.
// A kernel's launching op is the cpu_op with its "External id" (the innermost op open at the
// launch, libkineto's external correlation). Events of other categories (python_function,
// flows) are dropped while parsing.
// A trace with kernels on several GPUs keeps the GPU with the most kernel time (a note says so).

#include <string>
#include <string_view>

#include "calibrate/trace/gpu_trace.hpp"
#include "costmodel/diagnostics.hpp"

namespace parasim::calib::trace {

// Problems go to `diagnostics` (JSON paths into the file); the trace read so far is returned
// either way, and is only meaningful when diagnostics.ok().
RankTrace read_kineto_trace(std::string_view json_text, const std::string& file,
                            cost::Diagnostics& diagnostics);

}  // namespace parasim::calib::trace
