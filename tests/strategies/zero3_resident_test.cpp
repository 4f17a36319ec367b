// What DeepSpeed's ZeRO-3 coordinator keeps gathered during each layer pass
// (strategies/data_parallel/zero3_resident.hpp): fetch on use, prefetch up to the bucket, keep
// what is reused within the reuse distance or whose later use the prefetch passed over, stop
// prefetching at max live. Every expected figure is worked out by hand in the comments.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "scenario_builder.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/data_parallel/zero3_resident.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/input/model_presets.hpp"

using namespace parasim;

namespace {

strat::Zero3Gathering per_module(double bucket, double max_live, double reuse) {
  strat::Zero3Gathering z;
  z.unit = strat::Zero3Gather::kPerModule;
  z.prefetch_bucket_size = bucket;
  z.max_live_parameters = max_live;
  z.max_reuse_distance = reuse;
  return z;
}

}  // namespace

TEST_CASE("no prefetch, no reuse: only the module in use is gathered") {
  const auto r = strat::zero3_resident_elements({10, 20, 30}, 1, false, per_module(0, 1e9, 0));
  CHECK(r.forward == std::vector<double>{30});
  CHECK(r.backward == std::vector<double>{30});
}

TEST_CASE("prefetch up to the bucket, overshooting with the last module; a use passed over keeps it") {
  // Trace F m0 m1 m2, B m2 m1 m0 (elements 10 20 30 30 20 10); bucket 25.
  // t0 m0: fetch (10); prefetch m1 (20 < 25, go on), m2 (50): 60 resident; m0 released -> 50.
  // t1 m1: prefetch passes over B m2 and B m1 (available), fetches B m0 (10): 60 resident; m1's
  //        later use was passed over, so m1 stays.
  // t2 m2: 60 resident; released -> 30.  t3 B m2: fetched again, 60 resident.
  const auto r = strat::zero3_resident_elements({10, 20, 30}, 1, false, per_module(25, 1e9, 0));
  CHECK(r.forward == std::vector<double>{60});
  CHECK(r.backward == std::vector<double>{60});
}

TEST_CASE("max live stops the prefetch: limit = max live - available") {
  // t0: 10 available, limit min(35 - 10, 1000) = 25: m1 (20) then m2 (50 >= 25 stops): 60.
  const auto wide = strat::zero3_resident_elements({10, 20, 30}, 1, false, per_module(1000, 35, 0));
  CHECK(wide.forward == std::vector<double>{60});
  // max live at most the first module: nothing is prefetched.
  const auto capped = strat::zero3_resident_elements({10, 20, 30}, 1, false, per_module(1000, 10, 0));
  CHECK(capped.forward == std::vector<double>{30});
}

TEST_CASE("reuse distance: a module used again within it stays gathered") {
  // Two layers, trace F L0(10 20 30) L1(10 20 30), B L1(30 20 10) L0(30 20 10), reuse 100.
  // Forward: L0's modules are next used more than 100 elements later: released. L1 m1 is used
  // again after 30 + 30 = 60 and L1 m2 right away: both stay, so L1's forward ends with 50.
  // L1 m0 is next used after 20 + 30 + 30 + 20 = 100 elements, at the limit: released.
  // Backward L1: 50 on entry (m1, m2), then m2 and m1 are released (no later use).
  const auto r = strat::zero3_resident_elements({10, 20, 30}, 2, false, per_module(0, 1e9, 100));
  CHECK(r.forward == std::vector<double>{30, 50});
  CHECK(r.backward == std::vector<double>{30, 50});
}

TEST_CASE("checkpointed layers: the recompute's modules are reused by the backward") {
  // Trace F m0 m1, B (recompute) m0 m1 then m1 m0. No reuse: each alone -> 20 and 20.
  const auto alone = strat::zero3_resident_elements({10, 20}, 1, true, per_module(0, 1e9, 0));
  CHECK(alone.forward == std::vector<double>{20});
  CHECK(alone.backward == std::vector<double>{20});
  // Reuse 100: m0 and m1 stay from the forward on (each is used again within 40): 30 in both.
  const auto kept = strat::zero3_resident_elements({10, 20}, 1, true, per_module(0, 1e9, 100));
  CHECK(kept.forward == std::vector<double>{30});
  CHECK(kept.backward == std::vector<double>{30});
}

TEST_CASE("bounds: at least the largest module of the pass, at most every module of the trace") {
  const auto m = strat::find_model_preset("gpt3-175b")->spec;
  const auto z3 = strat::find_framework_preset("deepspeed")->spec.zero3;
  for (int tp : {1, 8}) {
    CAPTURE(tp);
    const auto units = strat::zero3_gather_units(m, tp, z3);
    const double largest = *std::max_element(units.begin(), units.end());
    const double layer = std::accumulate(units.begin(), units.end(), 0.0);
    for (bool checkpointed : {false, true}) {
      const auto r = strat::zero3_resident_elements(units, 6, checkpointed, z3);
      for (const auto* pass : {&r.forward, &r.backward}) {
        for (double e : *pass) {
          CHECK(e >= largest);
          CHECK(e <= 6 * layer);
        }
      }
    }
  }
}

TEST_CASE("DeepSpeed's defaults on GPT-3 175B at tp 8: the bucket's window, then what reuse keeps") {
  // Units per TP rank (h 12288): QKV 56.6M, projection 18.9M, fc1 75.5M, fc2 75.5M elements.
  // Forward of layer 0: QKV + (projection, fc1 prefetched: 18.9M < 5e7 goes on) = 151M;
  // projection + fc1 + fc2 = 170M; fc1 + fc2 + next QKV = 207.6M; fc2 + next QKV, projection
  // and fc1 = 226.5M, the layer's sum by coincidence of sizes.
  const auto m = strat::find_model_preset("gpt3-175b")->spec;
  const auto z3 = strat::find_framework_preset("deepspeed")->spec.zero3;
  const auto u = strat::zero3_gather_units(m, 8, z3);
  REQUIRE(u.size() == 4);
  const double layer = u[0] + u[1] + u[2] + u[3];
  const auto r = strat::zero3_resident_elements(u, 12, true, z3);
  CHECK(r.forward[0] == doctest::Approx(u[3] + u[0] + u[1] + u[2]));
  // A module used again within 1e9 elements (DeepSpeed's stage3_max_reuse_distance) stays
  // gathered: from the forward of the last layers through their recompute and backward, what is
  // held grows to the reuse distance plus the window, 4.67 layers here (1.057e9 elements), far
  // above the two layers of per-layer (FSDP-style) gathering.
  CHECK(r.backward[11] > z3.max_reuse_distance);
  CHECK(r.backward[11] < z3.max_reuse_distance + layer);
  // Early layers, whose reuse lies beyond the distance, hold the window only.
  CHECK(r.forward[1] < 2 * layer);
}

TEST_CASE("a layer too large for the reuse distance: the module in use, nothing prefetched") {
  // A 530B-class layer (hidden 20480, ffn 81920) at tp 1: QKV 1.26e9, projection 4.2e8, fc1
  // and fc2 1.68e9 elements; every matrix but the projection is above max live (1e9), so with
  // one of them in use max live - available < 0 and nothing is prefetched, and no module is
  // reused within 1e9 (fc1's next use lies behind fc2's 1.68e9).
  auto m = strat::find_model_preset("gpt3-175b")->spec;
  m.hidden = 20480;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 81920;
  const auto z3 = strat::find_framework_preset("deepspeed")->spec.zero3;
  const auto u = strat::zero3_gather_units(m, 1, z3);
  REQUIRE(u.size() == 4);
  const auto r = strat::zero3_resident_elements(u, 4, true, z3);
  // QKV (1.26e9) in use: above max live, no prefetch; the projection (4.2e8): limit
  // min(1e9 - 4.2e8, 5e7) takes fc1 (1.68e9); fc1 in use holds itself (nothing more: max live
  // exceeded); fc2 likewise. The most: projection + fc1.
  CHECK(r.forward[0] == doctest::Approx(u[1] + u[2]));
  for (double e : r.backward) CHECK(e == doctest::Approx(u[1] + u[2]));
}

TEST_CASE("refused input") {
  const auto z3 = per_module(0, 0, 0);
  CHECK_THROWS_AS(strat::zero3_resident_elements({10}, 0, false, z3), std::invalid_argument);
  CHECK_THROWS_AS(strat::zero3_resident_elements({}, 1, false, z3), std::invalid_argument);
  CHECK_THROWS_AS(strat::zero3_resident_elements({10, 0}, 1, false, z3), std::invalid_argument);
}

namespace {

double category(const strat::DeviceMemory& m, const std::string& name) {
  for (const auto& [key, bytes] : m.breakdown_bytes) {
    if (key == name) return bytes;
  }
  return -1;
}

}  // namespace

TEST_CASE("the simulated step holds what DeepSpeed keeps: persistent tensors whole, the bucket, the window") {
  // dp 8, ZeRO-3, llama2-7b's layer (8 layers, bf16): the RMSNorm weights (4,096 elements, two per
  // layer) are persistent; the gradient bucket (one layer's bf16 gradients: ZeRO-3 reduce-scatters
  // layer by layer, and the DeepSpeed export writes that bucket) is allocated once.
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  sc.training.recompute = cost::Recompute::kFull;
  auto per_layer = sc;
  per_layer.training.framework.zero3 = strat::Zero3Gathering{};
  sc.training.framework.zero3 = strat::find_framework_preset("deepspeed")->spec.zero3;
  const auto a = test::simulate_report(per_layer);
  const auto b = test::simulate_report(sc);
  const double element = 2;  // bf16
  const double dp = 8;
  const double persistent = 2 * 4096;
  CHECK(strat::zero3_persistent_elements(sc.model, 1, sc.training.framework.zero3) == persistent);
  CHECK(category(b.memory[0], "weights") - category(a.memory[0], "weights") ==
        doctest::Approx(sc.model.layers * persistent * element * (dp - 1) / dp).epsilon(1e-9));
  CHECK(category(b.memory[0], "gradients") - category(a.memory[0], "gradients") ==
        doctest::Approx(strat::layer_params_per_tp_rank(sc.model, 1) * element).epsilon(1e-9));
  // The gathered weights at the peak are at most the most any pass holds beyond the own shard.
  const auto units = strat::zero3_gather_units(sc.model, 1, sc.training.framework.zero3);
  const auto r = strat::zero3_resident_elements(units, sc.model.layers, true,
                                                sc.training.framework.zero3);
  double most = 0;
  for (const auto* pass : {&r.forward, &r.backward}) {
    for (double e : *pass) most = std::max(most, e);
  }
  const double gathered = category(b.memory[0], "zero-3 gathered weights");
  CHECK(gathered > 0);
  CHECK(gathered <= most * element * (dp - 1) / dp * (1 + 1e-12));
}

TEST_CASE("what a pass leaves gathered stays held through the head: the peak there shows it") {
  // llama2-7b with a 128,256-token vocabulary, dp 8, ZeRO-3 gathered per module, full recompute,
  // micro-batch 2: the peak is at the head, between the last layer's forward and its backward.
  // The last layers' modules are reused within the reuse distance, so the replay leaves them
  // gathered after the last forward, and the ledger holds exactly that at the peak.
  auto sc = test::small_scenario(8, 1, 1, 32, 2);
  sc.model.vocab = 128256;
  sc.parallel.zero_stage = 3;
  sc.training.recompute = cost::Recompute::kFull;
  sc.training.framework.zero3 = strat::find_framework_preset("deepspeed")->spec.zero3;
  const auto& z3 = sc.training.framework.zero3;
  const auto units = strat::zero3_gather_units(sc.model, 1, z3);
  const auto r = strat::zero3_resident_elements(units, sc.model.layers, true, z3);
  const double left = r.forward_end.back();
  REQUIRE(left > 0);
  for (std::size_t l = 0; l < r.forward.size(); ++l) {
    CHECK(r.forward_end[l] <= r.forward[l]);
    CHECK(r.backward_end[l] <= r.backward[l]);
  }
  CHECK(r.backward_end.front() == 0);  // the micro-batch's trace ends: nothing stays
  const auto report = test::simulate_report(sc);
  const double element = 2, dp = 8;
  CHECK(category(report.memory[0], "zero-3 gathered weights") ==
        doctest::Approx(left * element * (dp - 1) / dp).epsilon(1e-9));
}
