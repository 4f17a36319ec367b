#pragma once
// parasim::cli `simulate --trace` filters: --trace-ranks and --trace-window, and the size notice.
//
//   --trace-ranks LIST     global ranks, comma-separated, ranges inclusive: "0-7,64" (the
//                          ranks rank_layout numbers: stage-major, then replica, then TP rank).
//                          In the default symmetric simulation only one GPU per stage is
//                          simulated; ranks that are not are named in a note (--full simulates
//                          every GPU), and a list that holds none of the simulated ones is
//                          refused.
//   --trace-window START,END
//                          simulated time, each a duration with its unit ("0.5 s,1.2 s",
//                          "200 ms,450 ms", "0 s,3 ms"): the ops that overlap it (times stay
//                          those of the run). Asynchronous schedules simulate several steps;
//                          the window counts from the first.
// Bad text is a CommandLineError (exit 2) saying what was expected.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.hpp"
#include "sim/trace.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::cli {

struct RankRange {
  int first = 0;
  int last = 0;  // inclusive
};

std::vector<RankRange> parse_rank_list(std::string_view text);
std::pair<sim::Time, sim::Time> parse_time_window(std::string_view text);
// "0-3,8": consecutive ranks as ranges.
std::string format_rank_list(std::vector<int> ranks);

// The filter for a built workload and the notes to print (ranks asked for but not simulated);
// throws CommandLineError for a rank beyond the cluster's GPUs or a list without a simulated
// rank. Empty `ranks` keeps every device.
sim::TraceFilter make_trace_filter(const strat::BuiltWorkload& built, int total_gpus,
                                   const std::vector<RankRange>& ranks,
                                   std::vector<std::string>* notes);

// A trace larger than this is announced on standard error before it is formatted and written
// (issue 13: a GPT-3 --full trace of 866 MB appeared without a word). 100 MB: the size above
// which writing takes seconds and the file is worth a thought; a judgement, not a measurement.
constexpr std::size_t kTraceNoticeBytes = 100'000'000;

// "trace: writing 866.3 MB (5012345 events) to t.json; ..." for a trace over kTraceNoticeBytes,
// empty otherwise.
std::string trace_size_notice(const sim::TraceSize& size, const std::string& path);

}  // namespace parasim::cli
