// The NCCL communicators a GPU holds (strategies/workload/communicators.hpp) and what the step
// report makes of them: device memory = the allocator's peak + CUDA context + their buffers.
#include <doctest/doctest.h>

#include "costmodel/non_tensor_memory.hpp"
#include "scenario_builder.hpp"
#include "strategies/workload/communicators.hpp"

using namespace parasim;

TEST_CASE("tp, dp and the pipeline neighbours; groups of one left out") {
  auto sc = test::small_scenario(2, 2, 4, 16, 1);  // 16 GPUs, 8 per node
  const strat::RankLayout layout(sc.parallel, 8);  // cp 1: the replicas are the dp ranks
  sc.model.tied_embeddings = false;
  // A middle stage: tp pair, model-parallel group (tp x pp = 8 GPUs: stages 0-1 on the first
  // node, 2-3 on the second), dp pair, the previous and the next stage.
  auto mid = strat::device_communicators(sc, layout, 1, 0, 0);
  CHECK(mid.size() == 5);
  CHECK(mid[0] == cost::GroupPlacement{2, 2, 1});  // tp ranks 0 and 1 of one node
  CHECK(mid[1].size == 8);                           // model parallel: 4 stages x 2 tp ranks
  CHECK(mid[1].nodes_spanned == 2);
  CHECK(mid[2].size == 2);                           // dp
  // The first stage: no previous stage.
  CHECK(strat::device_communicators(sc, layout, 0, 0, 0).size() == 4);
  // Interleaving: the first stage also receives from the last.
  sc.parallel.chunks = 2;
  CHECK(strat::device_communicators(sc, layout, 0, 0, 0).size() == 5);
  CHECK(strat::device_communicators(sc, layout, 3, 0, 0).size() == 5);
  CHECK(strat::device_communicators(sc, layout, 1, 0, 0).size() == 5);
  // Tied embeddings: the first and last stages' embedding group.
  sc.parallel.chunks = 1;
  sc.model.tied_embeddings = true;
  CHECK(strat::device_communicators(sc, layout, 0, 0, 0).size() == 5);
  CHECK(strat::device_communicators(sc, layout, 1, 0, 0).size() == 5);
  // Context parallelism: the cp group; the layout sees dp x cp replicas, cp ranks adjacent.
  auto cp = test::small_scenario(2, 1, 1, 16, 1);
  cp.parallel.cp = 2;
  cp.training.attention = strat::AttentionKind::kFlash;
  auto replicas = cp.parallel;
  replicas.dp *= replicas.cp;
  const strat::RankLayout cp_layout(replicas, 8);
  const auto with_cp = strat::device_communicators(cp, cp_layout, 0, 1, 0);
  REQUIRE(with_cp.size() == 2);
  CHECK(with_cp[0].size == 4);  // dp x cp replicas
  CHECK(with_cp[1] == cost::GroupPlacement{2, 2, 1});
  // One GPU: nothing.
  auto one = test::small_scenario(1, 1, 1, 4, 1);
  const strat::RankLayout single(one.parallel, 1);
  CHECK(strat::device_communicators(one, single, 0, 0, 0).empty());
}

TEST_CASE("the report's device memory adds the CUDA context and the communicators' buffers") {
  auto sc = test::small_scenario(2, 4, 1, 8, 1);  // 8 GPUs of one node: tp 4, dp 2
  const auto r = test::simulate_report(sc);
  REQUIRE(r.memory.size() == 1);
  const auto& m = r.memory[0];
  const auto& f = sc.cluster.fabric;
  const double tp = cost::nccl_communicator_bytes(f, {4, 4, 1}).value;
  const double dp = cost::nccl_communicator_bytes(f, {2, 2, 1}).value;
  CHECK(m.cuda_context_bytes == cost::kCudaContextBytes);
  // The allocator's allocated memory (at least the ledger's peak) plus what lives outside it.
  CHECK(m.allocated_bytes >= m.peak_bytes);
  CHECK(m.device_bytes == m.allocated_bytes + m.cuda_context_bytes + m.nccl_buffer_bytes);
  // tp 4 inside the node: its model-parallel group has the same ranks but is a group of its own.
  const double mp = tp;
  CHECK(m.nccl_buffer_bytes == tp + mp + dp);
  // Whether it fits is judged on the device's memory: a capacity between the allocator's peak
  // and the device's memory does not fit.
  sc.cluster.device.hbm_capacity = cost::Bytes{(m.peak_bytes + m.device_bytes) / 2};
  const auto tight = test::simulate_report(sc);
  CHECK_FALSE(tight.fits_in_hbm);
  CHECK_FALSE(tight.memory[0].fits_in_hbm);
}
