#include "strategies/schedules/schedule_family.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

void post_validation_needs_zero_bubble(const Scenario& s, cost::Diagnostics& d) {
  if (!s.parallel.optimizer_post_validation) return;
  d.add("/parallel/optimizer_post_validation",
        fmt::format("optimizer post-validation applies to the zero-bubble schedules (zb-h1, "
                    "zb-h2, zb-1p, zb-2p), not {}",
                    schedule_name(s.parallel.schedule)));
}

void asynchronous_optimizer_is_adamw(const Scenario& s, cost::Diagnostics& d) {
  if (s.optimizer.kind == OptimizerKind::kAdamW) return;
  d.add("/optimizer/name", fmt::format("{} steps each stage's optimizer on its own; parasim "
                                       "models that with adamw (got {})",
                                       schedule_name(s.parallel.schedule),
                                       optimizer_name(s.optimizer.kind)));
}

void asynchronous_single_replica(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  if (p.dp == 1 && p.zero_stage == 0) return;
  d.add("/parallel/schedule",
        fmt::format("{} runs stage-local optimizer steps; parasim models it with dp = 1 and "
                    "zero_stage 0 (got dp {}, zero_stage {})",
                    schedule_name(p.schedule), p.dp, p.zero_stage));
}

}  // namespace

ParameterSpec post_validation_parameter(const std::string& default_value,
                                        const std::string& meaning) {
  ParameterSpec p;
  p.path = "/parallel/optimizer_post_validation";
  p.default_value = default_value;
  p.range_text = "true or false";
  p.meaning = meaning;
  p.when_not_taken = post_validation_needs_zero_bubble;
  return p;
}

std::vector<Rule> asynchronous_rules() {
  return {asynchronous_optimizer_is_adamw, asynchronous_single_replica};
}

double flush_pipeline_time(const StagePassTimes& t) {
  return t.sum_fbw + (t.micro_batches - 1) * t.max_fbw + t.hops;
}

double zb_h1_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fbw + (t.stages - 1) * std::max(0.0, t.f + t.b - t.w) + t.hops;
}

double asynchronous_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fbw;
}

}  // namespace parasim::strat
