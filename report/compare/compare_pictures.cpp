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

// One lane per stage (its first simulated device): every pipeline item as a box.
std::string compare_timeline_svg(const CompareRow& row) {
  const auto& built = row.built;
  const auto& r = row.report;
  std::vector<TimelineLane> lanes(static_cast<std::size_t>(built.shape.stages));
  for (std::size_t s = 0; s < lanes.size(); ++s) lanes[s].name = fmt::format("stage {}", s);
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
    lanes[static_cast<std::size_t>(built.devices[span.device].stage)].boxes.push_back(
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
  return svg_timeline(fmt::format("{}: {} ({}; {})", r.scenario, row.variant.label,
                                  variant_summary(row.variant), run),
                      lanes, row.result.makespan.to_seconds(), marks);
}

std::string compare_memory_svg(const CompareRow& row) {
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
                    series, row.result.makespan.to_seconds(),
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
