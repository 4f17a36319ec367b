// The NCCL model's plans as the simulator runs them: a collective alone on its links takes
// exactly NCCL's time for the chosen algorithm and protocol (nccl_model.hpp), whatever the
// placement: inside a node, one GPU per node, and rings over nodes whose NIC and NVLink parts run
// concurrently.
#include <doctest/doctest.h>

#include <cstdlib>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/nccl_model.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;

namespace {

// Simulates `sc` and checks every group of `kind` (all alone on their links: one stream each,
// no other traffic) against the NCCL model's time for its message over `place`. Returns how
// many groups were checked.
int check_groups(const strat::Scenario& sc, strat::CommKind kind, const cost::GroupPlacement& place) {
  const cost::CostModel costs(sc.cluster);
  const strat::BuiltWorkload built = strat::build_workload(sc, costs, {false});
  const sim::SimResult r = sim::Engine(built.workload).run();
  const auto starts = sim::group_start_times(built.workload, r);
  int checked = 0;
  for (sim::GroupId g = 0; g < built.workload.group_count(); ++g) {
    const strat::GroupInfo& info = built.groups[g];
    if (info.kind != kind || info.group_size != place.size) continue;
    const cost::Bytes message{info.message_bytes};
    const cost::NcclCandidate chosen = cost::nccl_choice(info.op, message, place, sc.cluster);
    const sim::Time want = sim::Time::us(chosen.latency_us) +
                           sim::Time::seconds(message.value / chosen.algorithm_bandwidth);
    const sim::Time got = r.op_end[built.workload.members(g)[0]] - starts[g];
    CAPTURE(cost::collective_name(info.op));
    CAPTURE(info.message_bytes);
    CHECK(std::llabs((got - want).picoseconds()) <= 1);
    ++checked;
  }
  return checked;
}

strat::Scenario a100_scenario(int dp, int tp, int gpus_per_node = 8) {
  auto sc = test::small_scenario(dp, tp, 1, dp * 2, 1, gpus_per_node);
  sc.cluster = cost::find_cluster_preset("dgx-a100-80gb")->spec;
  sc.cluster.nodes = dp * tp / 8 > 0 ? dp * tp / 8 : 1;
  sc.model.layers = 2;
  return sc;
}

}  // namespace

TEST_CASE("Uncontended NCCL plans take NCCL's time in the simulator: data-parallel all-reduce") {
  // 16 GPUs over 2 nodes (ring or tree, NIC and NVLink parts concurrent) and 1024 over 128.
  CHECK(check_groups(a100_scenario(16, 1), strat::CommKind::kDataParallel, {16, 8, 2}) > 0);
  CHECK(check_groups(a100_scenario(1024, 1), strat::CommKind::kDataParallel, {1024, 8, 128}) > 0);
  // One GPU per node: TP 8 inside each node, data parallelism across 4 nodes.
  CHECK(check_groups(a100_scenario(4, 8), strat::CommKind::kDataParallel, {4, 1, 4}) > 0);
}

TEST_CASE("Uncontended NCCL plans take NCCL's time in the simulator: ZeRO-3 gathers and scatters") {
  auto sc = a100_scenario(64, 1);
  sc.parallel.zero_stage = 3;
  CHECK(check_groups(sc, strat::CommKind::kDataParallel, {64, 8, 8}) > 0);
}

TEST_CASE("Uncontended NCCL plans take NCCL's time in the simulator: tensor parallel in a node") {
  auto sc = a100_scenario(1, 8);
  CHECK(check_groups(sc, strat::CommKind::kTensorParallel, {8, 8, 1}) > 0);
  sc.parallel.sequence_parallel = true;  // all-gathers and reduce-scatters
  CHECK(check_groups(sc, strat::CommKind::kTensorParallel, {8, 8, 1}) > 0);
  // NVLS on an H100 node.
  sc.cluster = cost::find_cluster_preset("dgx-h100")->spec;
  sc.parallel.sequence_parallel = false;
  CHECK(check_groups(sc, strat::CommKind::kTensorParallel, {8, 8, 1}) > 0);
}
