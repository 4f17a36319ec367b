// zb-1p and zb-2p as simulated (the searched order run by the engine) and optimizer
// post-validation (Qi et al. 2024, arXiv 2401.10241, sec. 4): with it each stage starts its next
// iteration right after its own optimizer step, so the steady-state step is the longest stage's
// own span of one iteration (its first pass's start to its optimizer step's end) instead of the
// whole iteration from the first stage's start to the last stage's end. The harness
// (equal_stages.hpp): per layer t_F = 6 us, t_B = 8 us, t_W = 4 us, free communication and
// optimizer; a small vocabulary keeps the last stage's logits small.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "equal_stages.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

using namespace parasim;
using strat::ItemKind;
using strat::PipelineSchedule;

namespace {

// p stages of 2 layers, the first and last one fewer (the Zero Bubble runs' layout).
strat::Scenario lighter_ends(PipelineSchedule s, int p, int m, bool post_validation) {
  auto sc = test::equal_stage_scenario(s, p, m, 2);
  sc.model.vocab = 1001;
  sc.parallel.stage_layers.assign(static_cast<std::size_t>(p), 2);
  sc.parallel.stage_layers.front() = 1;
  sc.parallel.stage_layers.back() = 1;
  sc.model.layers = 2 * p - 2;
  sc.parallel.optimizer_post_validation = post_validation;
  return sc;
}

// Per device: the first pass's start and the last item's end (optimizer steps included).
std::map<sim::DeviceId, std::pair<sim::Time, sim::Time>> spans_of(const test::Simulated& s) {
  std::map<sim::DeviceId, std::pair<sim::Time, sim::Time>> out;
  for (const auto& span : s.built.spans) {
    const sim::Time a = s.result.op_start[span.first], b = s.result.op_end[span.last];
    auto [it, added] = out.try_emplace(span.device, a, b);
    if (!added) {
      it->second.first = sim::min(it->second.first, a);
      it->second.second = sim::max(it->second.second, b);
    }
  }
  return out;
}

// Activations one micro-batch's forward keeps on each stage: its layers' stored activations, and
// on the last stage the logits and the loss's fp32 inputs (pipeline_emission.cpp).
std::vector<double> activations_per_micro_batch(const strat::Scenario& sc) {
  const cost::CostModel costs(sc.cluster);
  const double layer = strat::transformer_layer_program(sc, costs).activation_stored_bytes;
  const double logits = static_cast<double>(sc.training.micro_batch) * sc.model.seq_len *
                        sc.model.vocab * (cost::bytes_per_element(sc.training.precision) + 4.0);
  std::vector<double> out;
  for (int s = 0; s < sc.parallel.pp; ++s) {
    out.push_back(sc.stage_layer_count(s) * layer + (s + 1 == sc.parallel.pp ? logits : 0.0));
  }
  return out;
}

}  // namespace

TEST_CASE("Post-validation: the step is the longest stage's own span of one iteration") {
  for (auto schedule : {PipelineSchedule::kZbH2, PipelineSchedule::kZb1p, PipelineSchedule::kZb2p}) {
    for (int p : {4, 8}) {
      for (int m : {2 * p, 3 * p}) {
        CAPTURE(strat::schedule_name(schedule));
        CAPTURE(p);
        CAPTURE(m);
        const auto one = test::simulate_with(lighter_ends(schedule, p, m, false));
        const auto overlapped = test::simulate_with(lighter_ends(schedule, p, m, true));
        CHECK(one.built.steps.total == 1);
        CHECK(overlapped.built.steps.total == strat::kPostValidationSteps.total);
        sim::Time longest;
        for (const auto& [dev, span] : spans_of(one)) longest = sim::max(longest, span.second - span.first);
        CHECK(overlapped.report.step_time_s ==
              doctest::Approx(longest.to_seconds()).epsilon(1e-12).scale(0));
        // Without it, one iteration from an empty pipeline to the last stage's end.
        CHECK(one.report.step_time_s == doctest::Approx(one.result.makespan.to_seconds()).epsilon(1e-12));
        // Stage 0 (one layer) is not the longest stage: overlapping iterations gains.
        if (schedule == PipelineSchedule::kZb2p) {
          CHECK(overlapped.report.step_time_s < one.report.step_time_s);
        }
        CHECK(overlapped.report.step_time_s <= one.report.step_time_s);
      }
    }
  }
}

TEST_CASE("Post-validation runs reach their steady state: iterations end equally spaced") {
  for (auto schedule : {PipelineSchedule::kZb1p, PipelineSchedule::kZb2p}) {
    const int p = 8, m = 24;
    const auto s = test::simulate_with(lighter_ends(schedule, p, m, true));
    // Stage 0's last W of each iteration.
    std::vector<sim::Time> ends;
    for (const auto& span : s.built.spans) {
      if (span.device == 0 && span.kind == ItemKind::kWeightGrad && span.micro_batch % m == m - 1) {
        ends.push_back(s.result.op_end[span.last]);
      }
    }
    REQUIRE(ends.size() == static_cast<std::size_t>(strat::kPostValidationSteps.total));
    std::sort(ends.begin(), ends.end());
    for (std::size_t i = 2; i < ends.size(); ++i) CHECK(ends[i] - ends[i - 1] == ends[1] - ends[0]);
    // Per-step figures are per iteration: the FLOPs and bytes of one.
    const auto single = test::simulate_with(lighter_ends(schedule, p, m, false));
    CHECK(s.report.model_flops_per_step == single.report.model_flops_per_step);
    CHECK(s.report.comm_bytes == single.report.comm_bytes);
  }
}

TEST_CASE("zb-1p and zb-2p: every stage runs each pass once, F before B before W, within memory") {
  for (auto schedule : {PipelineSchedule::kZb1p, PipelineSchedule::kZb2p}) {
    for (int p : {2, 4, 8}) {
      for (int m : {p, 2 * p + 1}) {
        CAPTURE(strat::schedule_name(schedule));
        CAPTURE(p);
        CAPTURE(m);
        auto sc = test::equal_stage_scenario(schedule, p, m);
        const auto s = test::simulate_with(sc);
        // In the simulated timeline, per device: F_i ends before B_i starts, B_i before W_i.
        std::map<std::tuple<sim::DeviceId, ItemKind, int>, std::pair<sim::Time, sim::Time>> at;
        for (const auto& span : s.built.spans) {
          if (span.kind == ItemKind::kOptimizer) continue;
          CHECK(at.emplace(std::make_tuple(span.device, span.kind, span.micro_batch),
                           std::make_pair(s.result.op_start[span.first], s.result.op_end[span.last]))
                    .second);
        }
        const int total = m * s.built.steps.total;
        for (sim::DeviceId d = 0; d < static_cast<sim::DeviceId>(p); ++d) {
          for (int mb = 0; mb < total; ++mb) {
            const auto f = at.at({d, ItemKind::kForward, mb});
            const auto b = at.at({d, ItemKind::kBackward, mb});
            const auto w = at.at({d, ItemKind::kWeightGrad, mb});
            CHECK(f.second <= b.first);
            CHECK(b.second <= w.first);
            if (d > 0) CHECK(at.at({d - 1, ItemKind::kForward, mb}).second <= f.first);
            if (d + 1 < static_cast<sim::DeviceId>(p)) {
              CHECK(at.at({d + 1, ItemKind::kBackward, mb}).second <= b.first);
            }
          }
        }
        // Activations held stay within the search's limit: k x p x M_B, M_B the larger of the
        // first two stages' forward (every layer's stored activations; the last stage also its
        // logits, which here makes its own micro-batch larger than M_B).
        const auto act = activations_per_micro_batch(sc);
        const double limit = strat::searched_memory_multiple(schedule) * p * std::max(act[0], act[std::min(1, p - 1)]);
        for (std::size_t st = 0; st < act.size(); ++st) {
          double peak = 0;
          for (const auto& [category, bytes] : s.report.memory[st].breakdown_bytes) {
            if (category == "activations") peak = bytes;
          }
          CAPTURE(st);
          CHECK(peak <= limit + 1e-6 * limit);
        }
      }
    }
  }
}

TEST_CASE("optimizer_post_validation: on by default for zb-1p and zb-2p, refused elsewhere") {
  const std::string head = R"({"model": "gpt2-medium", "cluster": {"preset": "dgx-a100-80gb"},
      "training": {"global_batch": 32}, "parallel": {"pp": 8, "schedule": )";
  auto parse = [&](const std::string& rest) {
    return strat::parse_scenario(head + rest + "}}", "t.json");
  };
  CHECK(strat::post_validation(parse(R"("zb-2p")").parallel));
  CHECK(strat::post_validation(parse(R"("zb-1p")").parallel));
  CHECK_FALSE(strat::post_validation(parse(R"("zb-1p", "optimizer_post_validation": false)").parallel));
  CHECK_FALSE(strat::post_validation(parse(R"("zb-h1")").parallel));
  CHECK(strat::post_validation(parse(R"("zb-h2", "optimizer_post_validation": true)").parallel));
  try {
    parse(R"("1f1b", "optimizer_post_validation": true)");
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    REQUIRE(e.diagnostics().problems().size() == 1);
    CHECK(e.diagnostics().problems()[0].json_path == "/parallel/optimizer_post_validation");
  }
}
