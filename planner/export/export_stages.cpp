// Pipeline stages and the zero-bubble schedules in every export (export_common.hpp).
#include <fmt/format.h>

#include "planner/export/export_common.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::exporter {

bool uneven_stages(const strat::Scenario& s) {
  const int n = s.parallel.pp * s.parallel.chunks;
  for (int v = 1; v < n; ++v) {
    if (s.virtual_stage_layers(v) != s.virtual_stage_layers(0)) return true;
  }
  return false;
}

std::string stage_layers_text(const strat::Scenario& s) {
  std::string out = "[";
  const int n = s.parallel.pp * s.parallel.chunks;
  for (int v = 0; v < n; ++v) {
    out += (v == 0 ? "" : ", ") + std::to_string(s.virtual_stage_layers(v));
  }
  return out + "]";
}

void cover_stage_layers(const strat::Scenario& s, ExportContext& c, Target target) {
  (void)target;
  if (uneven_stages(s)) {
    c.mapped("/parallel/pp",
             fmt::format("{} stages, layers per virtual stage {}", s.parallel.pp,
                         stage_layers_text(s)));
  } else {
    c.mapped("/parallel/pp",
             fmt::format("{} stages of {} layers each", s.parallel.pp, s.stage_layer_count(0)));
  }
}

void stage_layers_mapped(const strat::Scenario& s, ExportContext& c, const std::string& key) {
  if (uneven_stages(s)) {
    c.mapped("/parallel/stage_layers", key);
  } else {
    c.unused("/parallel/stage_layers", "even stages: every target's default split");
  }
  c.mapped("/parallel/first_stage_layers", "read into /parallel/stage_layers");
  c.mapped("/parallel/last_stage_layers", "read into /parallel/stage_layers");
}

void stage_layers_refused(const strat::Scenario& s, ExportContext& c,
                          const std::string& supported_by, const std::string& closest) {
  c.cannot("/parallel/stage_layers",
           fmt::format("uneven pipeline stages (layers per virtual stage {})",
                       stage_layers_text(s)),
           supported_by, closest);
  c.part_of_refused("/parallel/first_stage_layers", "part of /parallel/stage_layers");
  c.part_of_refused("/parallel/last_stage_layers", "part of /parallel/stage_layers");
}

void refuse_searched_zero_bubble(const strat::Scenario& s, ExportContext& c,
                                 const std::string& closest) {
  c.cannot("/parallel/schedule",
           fmt::format("the zero-bubble schedule {} (Qi et al.'s searched schedule with B/W "
                       "split)",
                       strat::schedule_name(s.parallel.schedule)),
           "no export target (the Zero Bubble authors' Megatron-LM fork, "
           "sail-sg/zero-bubble-pipeline-parallelism; megatron-core 0.19.2 has no zero-bubble "
           "schedule; torchtitan's InterleavedZeroBubble and ZBVZeroBubble run two or more "
           "model chunks per stage)",
           closest);
}

void cover_post_validation(const strat::Scenario& s, ExportContext& c) {
  if (s.parallel.pp > 1 && strat::post_validation(s.parallel)) {
    c.cannot("/parallel/optimizer_post_validation",
             "optimizer post-validation (each stage's step right after its last pass, the "
             "global checks validated afterwards)",
             "no export target (the Zero Bubble authors' Megatron-LM fork, "
             "--enable-optimizer-post-validation)",
             "the step after a synchronisation (gradient norm and inf/NaN checks first)");
  } else if (s.parallel.pp > 1) {
    c.mapped("/parallel/optimizer_post_validation",
             "off: the step after a synchronisation (the trainers' own)");
  } else {
    c.unused("/parallel/optimizer_post_validation", "no pipeline (pp 1)");
  }
}

}  // namespace parasim::exporter
