// Optimizer offload's closed forms (costmodel/offload_cost.hpp) against hand counts, and the
// host presets' figures (costmodel/host_system.hpp).
#include "costmodel/offload_cost.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/host_system.hpp"
#include "costmodel/model_state_memory.hpp"

using namespace parasim::cost;

namespace {
OffloadSpec flavour(OffloadFlavour f) {
  OffloadSpec s;
  s.flavour = f;
  return s;
}
}  // namespace

TEST_CASE(
    "ZeRO-Offload's memory split: 16-bit weights stay, 18 B per owned parameter on the host") {
  // 13e9 parameters over 8 ranks, ZeRO-2, bf16: GPU 2 B weights, 2/8 B gradients, 12/8 B state.
  const double psi = 13e9, shard = psi / 8;
  const ModelStateBytes gpu = model_state_bytes(psi, 8, 2, true);
  const OffloadMemory m = offload_memory(flavour(OffloadFlavour::kDeepSpeed), gpu, shard);
  CHECK(m.hbm.weights.value == doctest::Approx(2 * psi).epsilon(1e-12));
  CHECK(m.hbm.gradients.value == 0);
  CHECK(m.hbm.optimizer.value == 0);
  // fp32 master 4 + momentum 4 + variance 4 + fp32 gradient 4 + 16-bit copy-back buffer 2.
  CHECK(m.host.value == doctest::Approx(18 * shard).epsilon(1e-12));
}

TEST_CASE("Megatron's offload fraction: momentum and variance of the fraction leave the GPU") {
  const double shard = 1e9;
  const ModelStateBytes gpu{{2e9}, {4e9}, {12 * shard}};
  OffloadSpec s = flavour(OffloadFlavour::kMegatron);
  s.fraction = 0.25;
  const OffloadMemory m = offload_memory(s, gpu, shard);
  CHECK(m.hbm.weights.value == 2e9);
  CHECK(m.hbm.gradients.value == 4e9);
  CHECK(m.hbm.optimizer.value == doctest::Approx(12e9 - 8 * 0.25e9).epsilon(1e-12));
  CHECK(m.host.value == doctest::Approx(16 * 0.25e9).epsilon(1e-12));
  CHECK(offloaded_parameters(s, shard) == doctest::Approx(0.25e9));
}

TEST_CASE("FSDP2's CPUOffloadPolicy: the whole shard's state on the host") {
  const ModelStateBytes gpu{{1}, {2}, {3}};
  const OffloadMemory m = offload_memory(flavour(OffloadFlavour::kFsdp2), gpu, 100);
  CHECK(m.hbm.total().value == 0);
  CHECK(m.host.value == 1600);
}

TEST_CASE("No offload leaves the GPU's state as it was") {
  const ModelStateBytes gpu{{1}, {2}, {3}};
  const OffloadMemory m = offload_memory(OffloadSpec{}, gpu, 100);
  CHECK(m.hbm.total().value == 6);
  CHECK(m.host.value == 0);
  CHECK(offload_link_bytes(OffloadSpec{}, 100, 4, 2).d2h.value == 0);
  CHECK(cpu_optimizer_time(OffloadSpec{}, 100, 1e9, 8) == parasim::sim::Time::zero());
}

TEST_CASE("Host-link bytes per step: DeepSpeed's accumulation through the host, Megatron's fp32") {
  const double p = 1e9;
  // One micro-batch: fp32 gradients down, 16-bit weights up.
  const auto one = offload_link_bytes(flavour(OffloadFlavour::kDeepSpeed), p, 1, 2);
  CHECK(one.d2h.value == 4e9);
  CHECK(one.h2d.value == 2e9);
  // Four: 16-bit gradients down after each, up before micro-batches 1..3, fp32 at the boundary.
  const auto four = offload_link_bytes(flavour(OffloadFlavour::kDeepSpeed), p, 4, 2);
  CHECK(four.d2h.value == 4 * 2e9 + 4e9);
  CHECK(four.h2d.value == 3 * 2e9 + 2e9);
  OffloadSpec meg = flavour(OffloadFlavour::kMegatron);
  meg.fraction = 0.5;
  const auto m = offload_link_bytes(meg, p, 4, 2);  // independent of the micro-batches
  CHECK(m.d2h.value == 4 * 0.5e9);
  CHECK(m.h2d.value == 4 * 0.5e9);
}

TEST_CASE("CPU step time: bytes per parameter over the rank's share of the node's DRAM bandwidth") {
  // DeepSpeedCPUAdam: 16 B loaded + 12 B stored + the 16-bit copy (4 read, 2 written) = 34 B.
  // 1e9 parameters, 8 ranks on a 409.6 GB/s node: 34e9 / 51.2e9 = 0.6640625 s.
  const auto ds = cpu_optimizer_time(flavour(OffloadFlavour::kDeepSpeed), 1e9, 409.6e9, 8);
  CHECK(ds.to_seconds() == doctest::Approx(34e9 / 51.2e9).epsilon(1e-9));
  // torch AdamW's single-tensor loop: 80 B per parameter.
  const auto torch = cpu_optimizer_time(flavour(OffloadFlavour::kMegatron), 1e9, 409.6e9, 8);
  CHECK(torch.to_seconds() == doctest::Approx(80e9 / 51.2e9).epsilon(1e-9));
  CHECK(cpu_step_bytes_per_parameter(flavour(OffloadFlavour::kDeepSpeed)) == 34);
  // FSDP2's (torchtitan's fused AdamW on the CPU shards): 16 B read, 12 B written.
  CHECK(cpu_step_bytes_per_parameter(flavour(OffloadFlavour::kFsdp2)) == 28);
}

TEST_CASE("Host presets: DGX A100 and H100 hosts, PCIe rates, C2C") {
  const auto* a100 = find_cluster_preset("dgx-a100-80gb");
  REQUIRE(a100 != nullptr);
  CHECK(a100->spec.host.memory.value == 2e12);
  CHECK(a100->spec.host.link == "pcie-gen4-x16");
  // 16 GT/s x 16 x 128/130 / 8 = 31.5077 GB/s raw, x 256/282.
  CHECK(a100->spec.host.link_bandwidth.bytes_per_s ==
        doctest::Approx(16e9 * 16 * 128 / 130 / 8 * 256 / 282).epsilon(1e-12));
  const auto* h100 = find_cluster_preset("dgx-h100");
  REQUIRE(h100 != nullptr);
  CHECK(h100->spec.host.link_bandwidth.bytes_per_s ==
        doctest::Approx(2 * a100->spec.host.link_bandwidth.bytes_per_s).epsilon(1e-12));
  CHECK(h100->spec.host.memory_bandwidth.bytes_per_s == doctest::Approx(614.4e9));
  CHECK(find_host_link("nvlink-c2c")->bandwidth.bytes_per_s == 450e9);
  // HGX boards: the vendor chooses the host; nothing known.
  CHECK(find_cluster_preset("hgx-h200")->spec.host.memory.value == 0);
}

TEST_CASE("ZeRO-Infinity (offload_param): 20 B per owned parameter on the host, stage3's copies") {
  OffloadSpec s = flavour(OffloadFlavour::kDeepSpeed);
  s.params = true;
  const double psi = 13e9, shard = psi / 8;
  const OffloadMemory m = offload_memory(s, model_state_bytes(psi, 8, 3, true), shard);
  CHECK(m.hbm.total().value == 0);
  // fp32 master, momentum, variance, gradients; the 16-bit gradient buffer and parameters.
  CHECK(m.host.value == doctest::Approx(20 * shard).epsilon(1e-12));
  // Every micro-batch's 16-bit round trip (1 and 3 micro-batches), the boundary's fp32 copy down,
  // nothing back after the step (the gathers' partition copies are per unit, not here).
  for (int mb : {1, 3}) {
    CAPTURE(mb);
    const auto b = offload_link_bytes(s, 1e9, mb, 2);
    CHECK(b.d2h.value == mb * 2e9 + 4e9);
    CHECK(b.h2d.value == mb * 2e9);
  }
}

TEST_CASE("One copy alone over the host link: its setup, then the bytes at the link's rate") {
  HostSpec h;
  h.link_bandwidth = Bandwidth{50e9};
  CHECK(host_copy_time(h, 1e9).to_seconds() == doctest::Approx(10e-6 + 0.02).epsilon(1e-12));
  CHECK(host_copy_time(h, 0) == parasim::sim::Time::zero());
  CHECK(host_copy_time(HostSpec{}, 1e9) == parasim::sim::Time::zero());  // link not known
}
