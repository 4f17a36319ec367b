#include "cli/plan_format.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "costmodel/diagnostics.hpp"
#include "planner/plan_scenario.hpp"
#include "report/report_format.hpp"

namespace parasim::cli {
namespace {

using nlohmann::ordered_json;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int staleness_of(const plan::Simulated& s) {
  int worst = 0;
  for (const auto& st : s.report.staleness) worst = std::max(worst, st.max);
  return worst;
}

double exposed_of(const strat::StepReport& r) {
  double t = 0;
  for (double x : r.exposed_comm_s) t += x;
  return t;
}

double bubble_of(const strat::StepReport& r) {
  double b = 0;
  for (double x : r.bubble_fraction) b = std::max(b, x);
  return b;
}

// The stage split column: "-" for even stages, "first/last" for an edge split ("0" where that
// edge takes the even share), "own" for the scenario's own split.
std::string edges_of(const plan::Candidate& c) {
  if (c.own_stage_layers) return "own";
  if (c.first_stage_layers == 0 && c.last_stage_layers == 0) return "-";
  return fmt::format("{}/{}", c.first_stage_layers, c.last_stage_layers);
}

// The layout column: dp/tp/pp/cp, and /ep for a model with experts.
std::string layout_of(const plan::Candidate& c, bool experts) {
  return experts ? fmt::format("{}/{}/{}/{}/{}", c.dp, c.tp, c.pp, c.cp, c.ep)
                 : fmt::format("{}/{}/{}/{}", c.dp, c.tp, c.pp, c.cp);
}

// The precision column (shown when a row runs FP8): the registry's name.
std::string precision_of(const plan::Candidate& c, const strat::Scenario& base) {
  return c.recipe == cost::QuantRecipe::kNone
             ? std::string(cost::dtype_name(base.training.precision))
             : fmt::format("fp8:{}", cost::quant_recipe_name(c.recipe));
}

std::string row(const std::string& rank, const plan::Simulated& s, double limit,
                const std::string& tie, const std::string& runs_on, bool experts,
                const std::string& extra_columns) {
  const plan::Candidate& c = s.screened.candidate;
  const strat::StepReport& r = s.report;
  return fmt::format(
      "{:>5}  {:>15}  {:>2} {:>5}  {:<16} {:>3}  {:<9} {:>4}  {:<3} {:<7}{} {:>9.3f} {:>11.0f} "
      "{:>5.1f}% {:>7.1f} {:>7.1f} {:>6.1f}% {:>8.3f} {:>5} {:>9.3f} {:>3}  {}",
      rank, layout_of(c, experts), c.chunks, edges_of(c), strat::schedule_name(c.schedule),
      c.micro_batch, cost::recompute_name(c.recompute),
      c.fsdp2 ? std::string("fsdp") : std::to_string(c.zero_stage),
      c.sequence_parallel ? "on" : "off",
      c.attention == strat::AttentionKind::kFlash ? "flash" : "unfused",
      extra_columns, r.step_time_s,
      r.tokens_per_s, 100 * r.mfu, s.peak_bytes / kGiB, (limit - s.peak_bytes) / kGiB,
      100 * bubble_of(r), exposed_of(r), staleness_of(s), s.screened.estimate.step_s, tie, runs_on);
}

// A line without trailing spaces (the last columns may be empty).
std::string line_of(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text + "\n";
}

ordered_json estimate_json(const plan::Estimate& e) {
  return ordered_json{{"step_time_s", e.step_s},
                      {"tokens_per_s", e.tokens_per_s},
                      {"mfu", e.mfu},
                      {"bubble_fraction", e.bubble_fraction},
                      {"exposed_comm_s", e.exposed_comm_s},
                      {"peak_memory_floor_bytes", e.peak_bytes},
                      {"staleness", e.staleness}};
}

ordered_json candidate_json(const plan::Candidate& c) {
  return ordered_json{
      {"gpus", c.gpus},
      {"dp", c.dp},
      {"tp", c.tp},
      {"pp", c.pp},
      {"cp", c.cp},
      {"sequence_parallel", c.sequence_parallel},
      {"chunks", c.chunks},
      {"schedule", strat::schedule_name(c.schedule)},
      {"micro_batch", c.micro_batch},
      {"recompute", cost::recompute_name(c.recompute)},
      {"zero_stage", c.zero_stage},
      {"sharding", c.fsdp2 ? std::string("fsdp2") : fmt::format("zero-{}", c.zero_stage)},
      {"attention", c.attention == strat::AttentionKind::kFlash ? "flash" : "unfused"},
      {"fp8_recipe", cost::quant_recipe_name(c.recipe)},
      {"tp_placement", strat::tp_placement_name(c.placement)},
      {"optimizer", strat::optimizer_name(c.optimizer)},
      {"stacking", strat::stacking_name(c.stacking)},
      {"block_size", c.block_size},
      {"first_stage_layers", c.first_stage_layers},
      {"last_stage_layers", c.last_stage_layers},
      {"own_stage_layers", c.own_stage_layers},
      {"offload", cost::offload_flavour_name(c.offload)},
      {"compile", c.compile},
      {"tp_comm_overlap", strat::tp_comm_overlap_name(c.tp_overlap)}};
}

ordered_json simulated_summary(const plan::Simulated& s) {
  ordered_json j{{"candidate", candidate_json(s.screened.candidate)},
                 {"estimate", estimate_json(s.screened.estimate)}};
  if (!s.ran) {
    j["rejected"] = s.why;
    return j;
  }
  j["simulated"] = ordered_json{{"step_time_s", s.report.step_time_s},
                                {"tokens_per_s", s.report.tokens_per_s},
                                {"mfu", s.report.mfu},
                                {"device_memory_bytes", s.peak_bytes},
                                {"fits", s.fits},
                                {"bubble_fraction", bubble_of(s.report)},
                                {"exposed_comm_s", exposed_of(s.report)},
                                {"staleness", staleness_of(s)}};
  j["screen_error"] = s.screen_error;
  return j;
}

ordered_json rejects_json(const plan::PlanResult& r) {
  ordered_json reasons = ordered_json::array();
  for (std::size_t k = 1; k < r.rejects.counts.size(); ++k) {
    if (r.rejects.counts[k] == 0) continue;
    reasons.push_back({{"reason", plan::reason_text(static_cast<plan::Reason>(k))},
                       {"count", r.rejects.counts[k]}});
  }
  ordered_json closest = ordered_json::array();
  for (const auto& s : r.rejects.closest_memory) {
    closest.push_back({{"candidate", candidate_json(s.candidate)},
                       {"peak_memory_floor_bytes", s.estimate.peak_bytes},
                       {"limit_bytes", r.limit_bytes}});
  }
  return ordered_json{{"by_reason", reasons}, {"closest_memory", closest}};
}

}  // namespace

std::string trainer_letters(const std::vector<exporter::Target>& trainers) {
  std::string out;
  for (exporter::Target t : trainers) {
    const char letter = t == exporter::Target::kMegatron    ? 'M'
                        : t == exporter::Target::kDeepSpeed ? 'D'
                                                            : 'T';
    out += (out.empty() ? "" : " ") + std::string(1, letter);
  }
  return out.empty() ? "-" : out;
}

std::string format_plan_text(const strat::Scenario& base, const plan::PlanResult& r,
                             bool timings, const PlanAnnotations& notes) {
  std::string out = fmt::format(
      "{}: {} on {} x {} ({}), global batch {}, sequence {}\n", cost::printable(base.name),
      cost::printable(base.model.name), base.cluster.nodes, base.cluster.gpus_per_node,
      cost::printable(base.cluster.device.name),
      base.training.global_batch, base.model.seq_len);
  out += fmt::format("memory limit {:.1f} GiB per GPU (HBM {:.1f} GiB less the headroom)\n",
                     r.limit_bytes / kGiB, r.hbm_bytes / kGiB);
  if (!notes.trainer_label.empty()) {
    out += fmt::format("for {}: only what it runs, as its exporter writes it (parasim export "
                       "--to needs no --allow-approximate)\n",
                       notes.trainer_label);
    for (const std::string& d : notes.defaults) out += "  its default: " + d + "\n";
  }
  out += "\n";
  const bool runs_on = notes.trainer_label.empty();
  const bool experts = base.model.moe.enabled();
  // A precision column when FP8 is in play (the scenario's, or a row's).
  bool fp8_rows = base.training.fp8.enabled();
  for (const auto& s : r.simulated) fp8_rows = fp8_rows || s.screened.candidate.recipe != cost::QuantRecipe::kNone;
  // A compile column when torch.compile is in play (the scenario's, or a row's).
  bool compile_rows = base.training.framework.compile.enabled;
  for (const auto& s : r.simulated) compile_rows = compile_rows || s.screened.candidate.compile;
  // A TP overlap column when an overlap is in play (the scenario's, or a row's).
  bool overlap_rows = base.parallel.tp_comm_overlap != strat::TpCommOverlap::kNone;
  for (const auto& s : r.simulated) {
    overlap_rows = overlap_rows || s.screened.candidate.tp_overlap != strat::TpCommOverlap::kNone;
  }
  auto precision = [&](const plan::Candidate& c) {
    return (fp8_rows ? fmt::format(" {:<19}", precision_of(c, base)) : std::string()) +
           (compile_rows ? fmt::format(" {:<7}", c.compile ? "on" : "off") : std::string()) +
           (overlap_rows ? fmt::format(" {:<11}", strat::tp_comm_overlap_name(c.tp_overlap))
                         : std::string());
  };
  const std::string precision_head =
      (fp8_rows ? fmt::format(" {:<19}", "precision") : "") +
      (compile_rows ? fmt::format(" {:<7}", "compile") : "") +
      (overlap_rows ? fmt::format(" {:<11}", "TP overlap") : "");
  const std::string precision_blank = (fp8_rows ? fmt::format(" {:<19}", "") : "") +
                                      (compile_rows ? fmt::format(" {:<7}", "") : "") +
                                      (overlap_rows ? fmt::format(" {:<11}", "") : "");
  out += fmt::format(
      "{:>5}  {:>15}  {:>2} {:>5}  {:<16} {:>3}  {:<9} {:>4}  {:<3} {:<7}{} {:>9} {:>11} {:>6} "
      "{:>7} {:>7} {:>7} {:>8} {:>5} {:>9} {:>3}  {}",
      "rank", experts ? "dp/tp/pp/cp/ep" : "dp/tp/pp/cp", "v", "edges", "schedule", "mb",
      "recompute", "ZeRO", "SP", "attn", precision_head, "step s", "tokens/s", "MFU", "peak",
      "free", "bubble", "exposed", "stale", "screen s", "tie", runs_on ? "runs on" : "");
  out = line_of(std::move(out));
  out += line_of(fmt::format(
      "{:>5}  {:>15}  {:>2} {:>5}  {:<16} {:>3}  {:<9} {:>4}  {:<3} {:<7}{} "
      "{:>9} {:>11} {:>6} {:>7} {:>7} {:>7} {:>8} {:>5} {:>9}",
      "", "", "", "", "", "", "", "", "", "", precision_blank, "", "", "", "GiB", "GiB", "",
      "comm s", "", ""));
  if (r.yours && r.yours->ran) {
    out += line_of(row("yours", *r.yours, r.limit_bytes, "", runs_on ? notes.yours_runs_on : "",
                       experts, precision(r.yours->screened.candidate)));
  }
  const int shown = std::min(r.ranked, 10);
  std::vector<plan::Candidate> ranked;
  std::vector<double> steps;
  for (int i = 0; i < r.ranked; ++i) {
    ranked.push_back(r.simulated[static_cast<std::size_t>(i)].screened.candidate);
    steps.push_back(r.simulated[static_cast<std::size_t>(i)].report.step_time_s);
  }
  // The tie over the rows shown; rows past the table within the same margin are counted.
  const plan::Tie tie = plan::tie_with_winner(
      std::vector<plan::Candidate>(ranked.begin(), ranked.begin() + shown),
      std::vector<double>(steps.begin(), steps.begin() + shown), notes.tie.fraction);
  int tied_beyond = 0;
  for (int i = shown; i < r.ranked && !tie.rows.empty(); ++i) {
    if (steps[static_cast<std::size_t>(i)] <= steps.front() * (1 + notes.tie.fraction)) {
      ++tied_beyond;
    }
  }
  auto tied = [&tie](int i) {
    return std::find(tie.rows.begin(), tie.rows.end(), i) != tie.rows.end();
  };
  for (int i = 0; i < shown; ++i) {
    const std::string letters =
        runs_on && static_cast<std::size_t>(i) < notes.runs_on.size() ? notes.runs_on[i] : "";
    out += line_of(row(std::to_string(i + 1), r.simulated[static_cast<std::size_t>(i)],
                       r.limit_bytes, tied(i) ? "=" : "", letters, experts,
                       precision(r.simulated[static_cast<std::size_t>(i)].screened.candidate)));
  }
  if (!notes.yours_refused.empty() && r.yours && r.yours->ran) {
    out += fmt::format("yours: {} does not run it as written: {}\n", notes.trainer_label,
                       notes.yours_refused);
  }
  if (runs_on && shown > 0) {
    out += "runs on: the trainers that run the row as planned, with their defaults (M megatron, "
           "D deepspeed, T torchtitan; plan --for TRAINER keeps only its own)\n";
  }
  if (!tie.rows.empty()) {
    std::string list;
    for (int i : tie.rows) list += (list.empty() ? "" : ", ") + std::to_string(i + 1);
    const plan::Candidate& s = ranked[static_cast<std::size_t>(tie.simplest)];
    if (tied_beyond > 0) {
      list += fmt::format(" (and {} more ranked below the table)", tied_beyond);
    }
    const std::string regime = notes.tie.regime.empty() ? "" : "for " + notes.tie.regime + " runs";
    out += fmt::format(
        "tie (=): rows {} are within {:.1f} % of the winner, the model's error {} ({}): parasim "
        "cannot rank them; the simplest shown is row {} ({} parallel dimension{} beside dp{}, {} "
        "chunk{})\n",
        list, 100 * notes.tie.fraction, regime, notes.tie.source, tie.simplest + 1,
        plan::parallel_dimensions(s), plan::parallel_dimensions(s) == 1 ? "" : "s",
        s.cp > 1 ? ", with cp" : ", no cp", s.chunks, s.chunks == 1 ? "" : "s");
  }
  if (r.ranked > 0) {
    const plan::Simulated& w = r.simulated.front();
    std::string path;
    double total = 0;
    for (const auto& entry : w.report.critical_path_s) total += entry.second;
    int n = 0;
    for (const auto& entry : w.report.critical_path_s) {
      if (n++ == 3 || total <= 0) break;
      path += fmt::format("{}{} {:.0f} %", path.empty() ? "" : ", ", entry.first,
                          100 * entry.second / total);
    }
    out += fmt::format("\nwinner: {}\nbottleneck (critical path): {}\n",
                       plan::describe(w.screened.candidate), path);
  } else {
    out += "\nno feasible plan in the space.\n";
    if (!r.rejects.closest_memory.empty()) {
      const auto& s = r.rejects.closest_memory.front();
      out += fmt::format(
          "the lightest candidate ({}) needs at least {:.1f} GiB per GPU of {:.1f} GiB: more GPUs "
          "(--gpus or search.gpus), recompute full, a higher ZeRO stage, a smaller micro-batch "
          "or a smaller --headroom would bring it closer\n",
          plan::describe(s.candidate), s.estimate.peak_bytes / kGiB, r.limit_bytes / kGiB);
    }
  }
  const double rate = r.screen_seconds > 0 ? static_cast<double>(r.space_size) / r.screen_seconds : 0;
  int ran = 0;
  for (const auto& s : r.simulated) ran += s.ran ? 1 : 0;
  out += fmt::format("\nscreen: {} candidates, {} feasible; simulated {}\n", r.space_size,
                     r.feasible, ran);
  if (timings) {
    out += fmt::format("time: screen {:.3f} s ({:.3g} candidates per second), simulate {:.3f} s\n",
                       r.screen_seconds, rate, r.simulate_seconds);
  }
  out += fmt::format("screen against simulation over the simulated set: mean |error| {:.1f} %, "
                     "largest {:.1f} %, Spearman rank correlation {:.3f}\n",
                     100 * r.mean_abs_error, 100 * r.max_abs_error, r.spearman);
  out += "\nrejected:\n";
  for (std::size_t k = 1; k < r.rejects.counts.size(); ++k) {
    if (r.rejects.counts[k] == 0) continue;
    out += fmt::format("  {:>12}  {}\n", r.rejects.counts[k],
                       plan::reason_text(static_cast<plan::Reason>(k)));
  }
  if (!r.rejects.closest_memory.empty()) {
    out += "closest memory rejects:\n";
    for (const auto& s : r.rejects.closest_memory) {
      out += fmt::format("  {}: {:.1f} GiB of {:.1f} GiB\n", plan::describe(s.candidate),
                         s.estimate.peak_bytes / kGiB, r.limit_bytes / kGiB);
    }
  }
  return out;
}

ordered_json plan_file_json(const nlohmann::json& document, const strat::Scenario& base,
                            const plan::PlanResult& r, const PlanProvenance& p) {
  ordered_json j;
  j["parasim_plan"] = 1;
  const plan::Simulated& w = r.simulated.front();
  j["scenario"] = plan::scenario_json(document, base, w.screened.candidate);
  j["predicted"] = report_to_json(apply_candidate(base, w.screened.candidate), w.report);
  j["screen_estimate"] = estimate_json(w.screened.estimate);
  ordered_json runners = ordered_json::array();
  for (int i = 1; i < r.ranked; ++i) {
    runners.push_back(simulated_summary(r.simulated[static_cast<std::size_t>(i)]));
  }
  j["runners_up"] = runners;
  j["rejects"] = rejects_json(r);
  j["search"] = ordered_json{{"candidates", r.space_size},
                             {"feasible", r.feasible},
                             {"simulated", r.simulated.size()},
                             {"memory_limit_bytes", r.limit_bytes},
                             {"screen_mean_abs_error", r.mean_abs_error},
                             {"screen_max_abs_error", r.max_abs_error},
                             {"spearman", r.spearman},
                             {"accepted_staleness", staleness_of(w)}};
  if (!p.trainer.empty()) {
    j["for_trainer"] = ordered_json{{"trainer", p.trainer},
                                    {"version", p.trainer_label},
                                    {"defaults", p.trainer_defaults}};
  }
  j["provenance"] = ordered_json{{"parasim_version", p.version},
                                 {"profile", p.profile.empty() ? "analytical" : p.profile},
                                 {"device", p.device},
                                 {"command_line", p.command_line}};
  return j;
}

ordered_json candidates_json(const strat::Scenario& base, const plan::PlanResult& r) {
  ordered_json screened = ordered_json::array();
  for (const auto& s : r.kept) {
    screened.push_back({{"index", s.index},
                        {"candidate", candidate_json(s.candidate)},
                        {"estimate", estimate_json(s.estimate)}});
  }
  ordered_json simulated = ordered_json::array();
  for (const auto& s : r.simulated) {
    ordered_json one = simulated_summary(s);
    if (s.ran) one["result"] = report_to_json(apply_candidate(base, s.screened.candidate), s.report);
    simulated.push_back(one);
  }
  return ordered_json{{"parasim_plan_candidates", 1},
                      {"scenario", base.name},
                      {"screened", screened},
                      {"simulated", simulated},
                      {"rejects", rejects_json(r)}};
}

}  // namespace parasim::cli
