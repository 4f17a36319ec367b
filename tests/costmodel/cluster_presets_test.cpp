#include "costmodel/cluster_presets.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace parasim::cost {

TEST_CASE("every cluster preset has positive peaks, capacity, bandwidths and latencies") {
  REQUIRE(cluster_presets().size() >= 5);
  for (const ClusterPreset& p : cluster_presets()) {
    CAPTURE(p.name);
    const ClusterSpec& c = p.spec;
    const DeviceSpec& d = c.device;
    CHECK(c.name == p.name);
    CHECK(!p.description.empty());
    CHECK(!p.source.empty());
    CHECK(!d.name.empty());
    CHECK(d.peak_fp32.flop_per_s > 0);
    CHECK(d.peak_tf32.flop_per_s > 0);
    CHECK(d.peak_bf16.flop_per_s > 0);
    CHECK(d.peak_fp16.flop_per_s > 0);
    CHECK(d.peak_fp8.flop_per_s >= 0);
    CHECK(d.peak_bf16 > d.peak_tf32);
    CHECK(d.peak_tf32 > d.peak_fp32);
    CHECK(d.hbm_capacity.value > 0);
    CHECK(d.hbm_bandwidth.bytes_per_s > 0);
    CHECK(d.kernel_launch_overhead > sim::Time::zero());
    CHECK(d.sm_count > 0);
    CHECK(c.gpus_per_node > 0);
    CHECK(c.nodes == 1);
    CHECK(c.intra_node.bandwidth.bytes_per_s > 0);
    CHECK(c.inter_node.bandwidth.bytes_per_s > 0);
    CHECK(c.intra_node.bandwidth > c.inter_node.bandwidth);
    CHECK(c.intra_node.latency > sim::Time::zero());
    CHECK(c.inter_node.latency > c.intra_node.latency);
  }
}

TEST_CASE("cluster preset names are unique and find_cluster_preset finds each one") {
  std::set<std::string> names;
  for (const ClusterPreset& p : cluster_presets()) {
    CHECK(names.insert(p.name).second);
    CHECK(find_cluster_preset(p.name) == &p);
  }
  for (const char* name :
       {"dgx-a100-80gb", "dgx-h100", "hgx-h200", "mi300x-8x", "perlmutter-a100"}) {
    CAPTURE(name);
    CHECK(find_cluster_preset(name) != nullptr);
  }
  CHECK(find_cluster_preset("dgx-h100 ") == nullptr);
  CHECK(find_cluster_preset("DGX-H100") == nullptr);
  CHECK(find_cluster_preset("") == nullptr);
}

TEST_CASE("datasheet figures are carried exactly") {
  const ClusterSpec& h100 = find_cluster_preset("dgx-h100")->spec;
  CHECK(h100.device.peak_bf16.flop_per_s == 989.4e12);
  CHECK(h100.device.peak_fp16.flop_per_s == 989.4e12);
  CHECK(h100.device.peak_fp8.flop_per_s == 1978.9e12);
  CHECK(h100.device.hbm_bandwidth.bytes_per_s == 3350e9);
  CHECK(h100.device.sm_count == 132);
  CHECK(h100.intra_node.bandwidth.bytes_per_s == 450e9);
  CHECK(h100.inter_node.bandwidth.bytes_per_s == 50e9);
  CHECK(h100.total_gpus() == 8);

  const ClusterSpec& a100 = find_cluster_preset("dgx-a100-80gb")->spec;
  CHECK(a100.device.peak_bf16.flop_per_s == 312e12);
  CHECK(a100.device.peak_fp8.flop_per_s == 0);
  CHECK(a100.device.sm_count == 108);
  CHECK(a100.intra_node.bandwidth.bytes_per_s == 300e9);
  CHECK(a100.inter_node.bandwidth.bytes_per_s == 25e9);

  const ClusterSpec& h200 = find_cluster_preset("hgx-h200")->spec;
  CHECK(h200.device.peak_bf16 == h100.device.peak_bf16);
  CHECK(h200.device.hbm_capacity.value == 141e9);
  CHECK(h200.device.hbm_bandwidth.bytes_per_s == 4800e9);

  const ClusterSpec& mi300x = find_cluster_preset("mi300x-8x")->spec;
  CHECK(mi300x.device.peak_bf16.flop_per_s == 1307.4e12);
  CHECK(mi300x.device.peak_fp8.flop_per_s == 2614.9e12);
  CHECK(mi300x.device.hbm_capacity.value == 192e9);
  CHECK(mi300x.device.sm_count == 304);
  CHECK(mi300x.intra_node.bandwidth.bytes_per_s == 448e9);

  const ClusterSpec& perlmutter = find_cluster_preset("perlmutter-a100")->spec;
  CHECK(perlmutter.gpus_per_node == 4);
  CHECK(perlmutter.inter_node.bandwidth.bytes_per_s == 25e9);
}

}  // namespace parasim::cost

namespace parasim::cost {

TEST_CASE("GB200 NVL72: one 72-GPU NVLink domain per rack, hosts of 4, the datasheet's dense peaks") {
  const ClusterPreset* p = find_cluster_preset("gb200-nvl72");
  REQUIRE(p != nullptr);
  ClusterSpec c = p->spec;
  CHECK(c.gpus_per_node == 72);
  CHECK(c.gpus_per_host == 4);
  c.nodes = 4;
  CHECK(c.total_gpus() == 288);
  CHECK(c.hosts() == 72);
  CHECK(c.host_gpus() == 4);
  // Rack figures of the datasheet over 72 GPUs, halved for dense: 360 PFLOP/s BF16 and 720 FP8
  // with sparsity; 13.4 TB (186 GB each) at 576 TB/s; NVLink 130 TB/s both directions.
  CHECK(c.device.peak_bf16.flop_per_s == doctest::Approx(360e15 / 72 / 2));
  CHECK(c.device.peak_fp8.flop_per_s == doctest::Approx(720e15 / 72 / 2));
  CHECK(c.device.hbm_bandwidth.bytes_per_s == doctest::Approx(576e12 / 72));
  CHECK(c.intra_node.bandwidth.bytes_per_s == doctest::Approx(130e12 / 72 / 2).epsilon(0.005));  // 72 x 1.8 = 129.6
  // A preset without hosts of its own: one host per node.
  const ClusterSpec& dgx = find_cluster_preset("dgx-h100")->spec;
  CHECK(dgx.host_gpus() == 8);
  CHECK(dgx.hosts() == dgx.nodes);
}

}  // namespace parasim::cost
