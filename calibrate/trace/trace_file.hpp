#pragma once
// parasim::calib::trace trace files — reads the traces `calibrate --from-trace` and
// `compare-trace` take, whichever format the file's first bytes say it is:
//   gzip (1f 8b)            a gzip-compressed Kineto trace (.json.gz), inflated in memory
//   '{' (after blanks)      a PyTorch profiler (Kineto) trace, kineto_reader.hpp
//   "SQLite format 3\0"     an Nsight Systems export (nsys export --type sqlite), nsys_reader.hpp
// Limits, each named in its message: a file of at most kMaxTraceFileBytes, a Kineto trace of at
// most kMaxTraceTextBytes once inflated, at most kMaxTraceKernels kernels per rank.
// Problems (cannot open, not a trace, truncated gzip, invalid JSON, fields of the wrong type) are
// all collected and thrown together as cost::InputError naming the file and the JSON path (for
// SQLite, the table and column).

#include <cstddef>
#include <string>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"

namespace parasim::calib::trace {

inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{1} << 30;  // 1 GiB on disk
inline constexpr std::size_t kMaxTraceTextBytes = std::size_t{3} << 30;  // 3 GiB of JSON
inline constexpr std::size_t kMaxTraceKernels = std::size_t{20'000'000};
// Times a trace may hold (microseconds, either sign: Kineto's epoch timestamps are ~1.7e15 us),
// and the most ranks a group, a world or a rank index may name.
inline constexpr double kMaxTraceMicroseconds = 1e17;
inline constexpr int kMaxTraceRanks = 1 << 20;

// One rank's trace (an Nsight export of several processes: one RankTrace per process that ran
// kernels, in process order).
std::vector<RankTrace> read_trace_file(const std::string& path);

// gzip-inflates `data` (one or more members), refusing output over `max_bytes`; throws
// std::runtime_error with the reason (truncated, corrupt, over the limit).
std::string gunzip(const std::string& data, std::size_t max_bytes);

}  // namespace parasim::calib::trace
