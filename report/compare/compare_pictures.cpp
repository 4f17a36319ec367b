#include "report/compare/compare_pictures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "report/number_text.hpp"
#include "report/svg/svg_plots.hpp"

namespace parasim::cli {
namespace {

BoxKind box_kind(strat::ItemKind k) {
  switch (k) {
    case strat::ItemKind::kForward: return BoxKind::kForward;
    case strat::ItemKind::kBackward: return BoxKind::kBackward;
    case strat::ItemKind::kWeightGrad: return BoxKind::kWeightGrad;
    case strat::ItemKind::kOptimizer: return BoxKind::kOptimizer;
  }
  return BoxKind::kOther;
}

bool allowed_in_name(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string variant_summary(const CompareVariant& v) {
  const auto& s = v.scenario;
  const auto& p = s.parallel;
  std::string text = strat::schedule_name(p.schedule);
  if (p.chunks > 1) text += fmt::format(" v={}", p.chunks);
  text += fmt::format(", dp {} tp {} cp {} pp {}{}", p.dp, p.tp, p.cp, p.pp,
                      p.sequence_parallel ? " +SP" : "");
  if (p.tp_placement != strat::TpPlacement::kMegatron || v.axis == "placement") {
    text += fmt::format(", {}", strat::tp_placement_name(p.tp_placement));
  }
  text += fmt::format(", seq {}", s.model.seq_len);
  if (v.axis != "optimizer" && s.optimizer.kind != strat::OptimizerKind::kAdamW) {
    text += fmt::format(", {}", strat::optimizer_name(s.optimizer.kind));
  }
  return text;
}

BoxKind comm_box_kind(strat::CommKind k) {
  switch (k) {
    case strat::CommKind::kTensorParallel: return BoxKind::kTensorComm;
    case strat::CommKind::kPipeline: return BoxKind::kPipelineComm;
    case strat::CommKind::kDataParallel: return BoxKind::kDataComm;
    case strat::CommKind::kContextParallel: return BoxKind::kContextComm;
    case strat::CommKind::kExpertParallel: return BoxKind::kExpertComm;
  }
  return BoxKind::kComm;
}

double shared_span_s(const std::vector<CompareRow>& rows) {
  double span = 0;
  for (const auto& row : rows) {
    if (row.ran()) span = std::max(span, row.result.makespan.to_seconds());
  }
  return span;
}

// Per stage (its first simulated device): a lane of pipeline items and optimizer kernels, and a
// lane of its collectives and transfers.
std::string compare_timeline_svg(const CompareRow& row, double span_s) {
  const auto& built = row.built;
  const auto& r = row.report;
  const auto& w = built.workload;
  const std::size_t stages = static_cast<std::size_t>(built.shape.stages);
  std::vector<TimelineLane> lanes(2 * stages);
  for (std::size_t s = 0; s < stages; ++s) {
    lanes[2 * s].name = fmt::format("stage {}", s);
    lanes[2 * s + 1].name = fmt::format("stage {} comm", s);
  }
  // The device each stage is drawn for, and its lanes.
  std::vector<int> lane_of_device(built.devices.size(), -1);
  for (std::size_t d = 0; d < built.devices.size(); ++d) {
    const auto& dev = built.devices[d];
    if (dev.dp_rank == 0 && dev.tp_rank == 0) lane_of_device[d] = 2 * dev.stage;
  }
  for (sim::OpId o = 0; o < w.op_count(); ++o) {
    const sim::Op& op = w.op(o);
    if (w.is_host(o)) continue;
    const int lane = lane_of_device[w.device_of(o)];
    if (lane < 0) continue;
    const double start = row.result.op_start[o].to_seconds(), end = row.result.op_end[o].to_seconds();
    if (op.kind == sim::OpKind::kGroupMember) {
      lanes[static_cast<std::size_t>(lane + 1)].boxes.push_back(
          TimelineBox{start, end, comm_box_kind(built.groups[op.group].kind), w.op_name(o)});
    } else if (op.category == built.optimizer_category) {
      lanes[static_cast<std::size_t>(lane)].boxes.push_back(
          TimelineBox{start, end, BoxKind::kOptimizer, w.op_name(o)});
    }
  }
  for (const auto& span : built.spans) {
    if (built.devices[span.device].dp_rank != 0 || built.devices[span.device].tp_rank != 0) continue;
    const char* letter = span.kind == strat::ItemKind::kForward      ? "F"
                         : span.kind == strat::ItemKind::kBackward   ? "B"
                         : span.kind == strat::ItemKind::kWeightGrad ? "W"
                                                                     : "opt";
    std::string label = span.kind == strat::ItemKind::kOptimizer
                            ? fmt::format("opt {}", span.step)
                            : fmt::format("{}{}", letter, span.micro_batch);
    if (built.shape.chunks > 1 && span.kind != strat::ItemKind::kOptimizer) {
      label += fmt::format(".{}", span.chunk);
    }
    if (span.kind == strat::ItemKind::kOptimizer) continue;  // its kernels are drawn above
    lanes[static_cast<std::size_t>(2 * built.devices[span.device].stage)].boxes.push_back(
        TimelineBox{row.result.op_start[span.first].to_seconds(),
                    row.result.op_end[span.last].to_seconds(), box_kind(span.kind), label});
  }
  std::vector<TimelineMark> marks;
  std::string run = count_of(r.steps_simulated, "step");
  if (r.asynchronous) {
    const int steady = r.steps_simulated - r.warmup_steps;
    run = fmt::format("{}, {} warm-up shaded",
                      count_of(r.steps_simulated, "global batch", "global batches"),
                      r.warmup_steps);
    marks.push_back({0.0, r.window_begin_s,
                     fmt::format("warm-up: {}, excluded", count_of(r.warmup_steps, "batch", "batches")),
                     true});
    marks.push_back({r.window_begin_s, r.window_end_s,
                     fmt::format("steady state: {} (the report's window)",
                                 count_of(steady, "batch", "batches")),
                     false});
    marks.push_back({r.window_end_s, r.simulated_time_s, "after the window, excluded", true});
  }
  // Boxes in time order within a lane (the narrow-box merging reads them so).
  for (auto& lane : lanes) {
    std::stable_sort(lane.boxes.begin(), lane.boxes.end(),
                     [](const TimelineBox& a, const TimelineBox& b) { return a.start_s < b.start_s; });
  }
  return svg_timeline(fmt::format("{}: {} ({}; {})", r.scenario, row.variant.label,
                                  variant_summary(row.variant), run),
                      lanes, span_s > 0 ? span_s : row.result.makespan.to_seconds(), marks);
}

std::string compare_memory_svg(const CompareRow& row, double span_s) {
  std::vector<MemorySeries> series;
  std::vector<int> series_of_device(row.built.devices.size(), -1);
  for (std::size_t d = 0; d < row.built.devices.size(); ++d) {
    const auto& dev = row.built.devices[d];
    if (dev.dp_rank != 0 || dev.tp_rank != 0) continue;
    series_of_device[d] = static_cast<int>(series.size());
    series.push_back(MemorySeries{fmt::format("stage {}", dev.stage), {}});
  }
  for (const auto& sample : row.result.memory_timeline) {
    const int s = series_of_device[sample.device];
    if (s >= 0) {
      series[static_cast<std::size_t>(s)].points.emplace_back(
          sample.time.to_seconds(), static_cast<double>(sample.total_bytes));
    }
  }
  return svg_memory(fmt::format("{}: {} ({}): memory per stage (stashed weight versions not "
                                "drawn)",
                                row.report.scenario, row.variant.label,
                                variant_summary(row.variant)),
                    series, span_s > 0 ? span_s : row.result.makespan.to_seconds(),
                    row.variant.scenario.cluster.device.hbm_capacity.value);
}

std::vector<std::string> picture_stems(const std::vector<std::string>& labels) {
  std::vector<std::string> stems;
  std::set<std::string> taken;
  for (const auto& label : labels) {
    std::string stem = label;
    std::replace_if(stem.begin(), stem.end(), [](char c) { return !allowed_in_name(c); }, '_');
    if (stem.empty() || std::all_of(stem.begin(), stem.end(), [](char c) { return c == '.'; })) {
      stem = "_" + stem;
    }
    std::string unique = stem;
    for (int n = 2; taken.count(unique) > 0; ++n) unique = fmt::format("{}-{}", stem, n);
    taken.insert(unique);
    stems.push_back(std::move(unique));
  }
  return stems;
}

}  // namespace parasim::cli
