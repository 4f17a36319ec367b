// The framework's host model (strategies/framework/, host_emission.cpp): a host-bound step takes
// the summed host costs exactly, a GPU-bound one its summed GPU bodies, each sync drains the GPU
// and then exposes the sync's cost and the next kernel's host cost, and each preset's kernel and
// sync counts per layer are the ones docs/frameworks.md tables.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "equal_stages.hpp"
#include "scenario_builder.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;
using sim::Time;

namespace {

class ConstantGemms final : public cost::GemmCostModel {
 public:
  explicit ConstantGemms(Time t) : t_(t) {}
  Time gemm_time(const cost::GemmShape&) const override { return t_; }
  double efficiency(const cost::GemmShape&) const override { return 1.0; }

 private:
  Time t_;
};

// pp 1, dp 1, tp 1, `layers` layers, m micro-batches; memory-bound kernels, launches and links
// free; the "ideal" framework (no host cost, no syncs) unless the test sets costs.
strat::Scenario single_device(int layers, int m) {
  auto sc = test::equal_stage_scenario(strat::PipelineSchedule::kOneFOneB, 1, m, layers);
  sc.training.framework = strat::find_framework_preset("ideal")->spec;
  return sc;
}

std::int64_t kernels(const std::vector<strat::LayerStep>& steps) {
  std::int64_t k = 0;
  for (const auto& s : steps) k += s.is_collective ? 0 : s.compute.kernels;
  return k;
}

int syncs(const std::vector<strat::LayerStep>& steps) {
  int n = 0;
  for (const auto& s : steps) n += s.syncs_after;
  return n;
}

}  // namespace

TEST_CASE("a host-bound step takes the summed host costs: kernels x per-op costs") {
  const int layers = 3, m = 2;
  auto sc = single_device(layers, m);
  auto& h = sc.training.framework.host;
  h.forward_op = Time::us(10);
  h.backward_op = Time::us(3);
  // GPU work free (GEMMs 0, memory 0, no gap): the step is the host's.
  const auto s = test::simulate_with(sc, std::make_shared<ConstantGemms>(Time::zero()));
  const cost::CostModel costs(sc.cluster, std::make_shared<ConstantGemms>(Time::zero()), 1.0);
  const auto layer = strat::transformer_layer_program(sc, costs);
  const auto embed = strat::embedding_program(sc, costs);
  const auto head = strat::head_program(sc, costs);
  const std::int64_t fwd = kernels(embed.forward) + layers * kernels(layer.forward) +
                           kernels(head.forward);
  const std::int64_t bwd = kernels(head.backward) + layers * kernels(layer.backward) +
                           kernels(embed.backward);
  const double want = m * (fwd * 10e-6 + bwd * 3e-6);
  CHECK(s.report.host_busy_s == doctest::Approx(want).epsilon(1e-12).scale(0));
  CHECK(s.report.step_time_s == doctest::Approx(want).epsilon(1e-12).scale(0));
  CHECK(s.report.host_syncs_per_step == 0);
}

TEST_CASE("a GPU-bound step takes the summed GPU bodies; the host's lead shows only at the start") {
  const Time gemm = Time::us(100);
  auto extra = [&](int layers, int m) {
    auto sc = single_device(layers, m);
    const auto gpu_only = test::simulate_with(sc, std::make_shared<ConstantGemms>(gemm));
    sc.training.framework.host.forward_op = Time::us(2);
    sc.training.framework.host.backward_op = Time::us(1);
    const auto with_host = test::simulate_with(sc, std::make_shared<ConstantGemms>(gemm));
    return with_host.report.step_time_s - gpu_only.report.step_time_s;
  };
  // The host issues each kernel long before the GPU reaches it, except the step's first ones: the
  // difference is the same few microseconds whatever the layers and micro-batches.
  const double first = extra(1, 1);
  CHECK(first > 0);
  CHECK(first < 10e-6);
  CHECK(extra(2, 3) == doctest::Approx(first).epsilon(1e-12).scale(0));
  CHECK(extra(4, 8) == doctest::Approx(first).epsilon(1e-12).scale(0));
}

TEST_CASE("a sync drains the GPU, then exposes its cost and the next kernel's host cost") {
  const int layers = 4, m = 2;
  auto sc = single_device(layers, m);
  const Time gemm = Time::us(100);
  sc.training.framework.host.forward_op = Time::us(2);
  sc.training.framework.host.sync = Time::us(3);
  const auto none = test::simulate_with(sc, std::make_shared<ConstantGemms>(gemm));
  sc.training.framework.counts.layer_syncs = 1;  // before each layer's MLP
  const auto synced = test::simulate_with(sc, std::make_shared<ConstantGemms>(gemm));
  // Per layer forward: the GPU idles for the sync (3 us) and the MLP's first launch (2 us).
  const double want = none.report.step_time_s + layers * m * 5e-6;
  CHECK(synced.report.step_time_s == doctest::Approx(want).epsilon(1e-12).scale(0));
  CHECK(synced.report.host_syncs_per_step == doctest::Approx(layers * m));
  // With syncs the host's busy time grows by their cost only.
  CHECK(synced.report.host_busy_s ==
        doctest::Approx(none.report.host_busy_s + layers * m * 3e-6).epsilon(1e-12).scale(0));
}

TEST_CASE("per preset, the layer's kernels and syncs are the ones docs/frameworks.md tables") {
  // GPT with biases and dropout, tp 1, the unfused core (Megatron's fused softmax), fp16. The
  // linear's bias as its own kernel (megatron-lm, megatron-lm-2021) adds one forward kernel.
  auto sc = test::small_scenario(1, 1, 1, 8, 1);
  sc.model = strat::find_model_preset("gpt2-medium")->spec;
  sc.training.precision = cost::Dtype::kFp16;
  sc.training.attention = strat::AttentionKind::kUnfused;
  struct Want {
    std::string preset;
    std::int64_t forward, backward;
    int syncs;
    std::int64_t grad_adds;
  };
  for (const Want& w : {Want{"megatron-deepspeed", 14, 33, 2, 12},
                        Want{"megatron-lm-2021", 15, 33, 0, 12},
                        Want{"megatron-lm", 15, 33, 0, 8}}) {
    CAPTURE(w.preset);
    sc.training.framework = strat::find_framework_preset(w.preset)->spec;
    const cost::CostModel costs(sc.cluster);
    const auto layer = strat::transformer_layer_program(sc, costs);
    CHECK(kernels(layer.forward) == w.forward);
    CHECK(kernels(layer.backward) == w.backward);
    CHECK(syncs(layer.forward) == w.syncs);
    CHECK(syncs(layer.forward) == sc.training.framework.counts.layer_syncs);
    CHECK(kernels(layer.grad_accumulation) == w.grad_adds);
  }
}

TEST_CASE("get_batch's syncs run on every stage, or on the first and last virtual stage only") {
  const int p = 4, m = 4, start_syncs = 2;  // interleaving wants m a multiple of p
  for (const int chunks : {1, 2}) {
    CAPTURE(chunks);
    auto sc = test::equal_stage_scenario(
        chunks == 1 ? strat::PipelineSchedule::kOneFOneB : strat::PipelineSchedule::kInterleaved,
        p, m, 1, chunks);
    sc.training.framework = strat::find_framework_preset("ideal")->spec;
    auto& c = sc.training.framework.counts;
    c.forward_start_syncs = start_syncs;
    c.batch_on_every_stage = true;
    const auto every = test::simulate_with(sc, std::make_shared<ConstantGemms>(Time::us(10)));
    // Every forward item (m per chunk on every device) syncs: the mean per device.
    CHECK(every.report.host_syncs_per_step == doctest::Approx(start_syncs * m * chunks));
    c.batch_on_every_stage = false;
    const auto ends = test::simulate_with(sc, std::make_shared<ConstantGemms>(Time::us(10)));
    // Only virtual stage 0 (device 0's first chunk) and the last (device p-1's last chunk).
    CHECK(ends.report.host_syncs_per_step == doctest::Approx(2.0 * start_syncs * m / p));
    // Per device (the "ideal" framework has no other syncs): the end stages' devices sync as
    // often as each other and as every device did before; the middle ones not at all.
    const auto& dev = ends.built.devices;
    REQUIRE(dev.size() == static_cast<std::size_t>(p));
    CHECK(dev.front().host_syncs > 0);
    CHECK(dev.back().host_syncs == dev.front().host_syncs);
    CHECK(dev.front().host_syncs * chunks == every.built.devices.front().host_syncs);
    for (std::size_t d = 1; d + 1 < dev.size(); ++d) CHECK(dev[d].host_syncs == 0);
  }
  // The same rule as the builder's, for the screen (host_plan.hpp).
  auto fw = strat::find_framework_preset("megatron-lm")->spec;
  CHECK_FALSE(fw.counts.batch_on_every_stage);
  CHECK(strat::loads_batch(fw, 0, 7));
  CHECK_FALSE(strat::loads_batch(fw, 3, 7));
  CHECK(strat::loads_batch(fw, 7, 7));
  // (No receive here: megatron-lm's receive has its own sync, p2p_syncs.)
  const auto middle = strat::item_start_host(fw, strat::HostItem::kForward, false, false,
                                             Time::us(4));
  Time middle_work = Time::zero();
  for (const auto& a : middle) {
    CHECK(a.syncs == 0);
    middle_work += a.work;
  }
  // The micro-batch's host loop is still paid there; get_batch's kernel launches are not.
  CHECK(middle_work == fw.host.micro_batch);
  const auto first = strat::item_start_host(fw, strat::HostItem::kForward, false, true,
                                            Time::us(4));
  int first_syncs = 0;
  for (const auto& a : first) first_syncs += a.syncs;
  CHECK(first_syncs == fw.counts.forward_start_syncs);
  CHECK(strat::find_framework_preset("megatron-lm-2021")->spec.counts.batch_on_every_stage);
  CHECK_FALSE(strat::find_framework_preset("megatron-deepspeed")->spec.counts.batch_on_every_stage);
}

TEST_CASE("data-parallel policies: after the backward the reduction waits for the whole backward") {
  auto sc = test::small_scenario(2, 1, 1, 4, 1);
  sc.model.layers = 4;
  sc.parallel.dp_bucket = cost::Bytes{1e6};  // several buckets
  auto overlapped = sc;
  overlapped.training.framework.gradient_reduction = strat::GradientReduction::kOverlapped;
  auto after = sc;
  after.training.framework.gradient_reduction = strat::GradientReduction::kAfterBackward;
  const auto a = test::simulate_with(overlapped, std::make_shared<ConstantGemms>(Time::us(50)));
  const auto b = test::simulate_with(after, std::make_shared<ConstantGemms>(Time::us(50)));
  // Every gradient collective of the after-backward policy starts after the last backward op.
  const auto& w = b.built.workload;
  Time last_backward;
  for (const auto& span : b.built.spans) {
    if (span.kind == strat::ItemKind::kBackward) {
      last_backward = sim::max(last_backward, b.result.op_end[span.last]);
    }
  }
  int reductions = 0;
  for (sim::OpId o = 0; o < w.op_count(); ++o) {
    if (w.text(w.op(o).category) != "dp-comm") continue;
    ++reductions;
    CHECK(b.result.op_start[o] >= last_backward);
  }
  CHECK(reductions > 0);
  CHECK(a.report.step_time_s < b.report.step_time_s);  // overlapping hides some of it
}
