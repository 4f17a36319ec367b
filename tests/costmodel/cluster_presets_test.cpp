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
    // CDNA 4 has no TF32 matrix rate: its tf32 is the FP32 rate (mi355x-8x).
    CHECK(d.peak_tf32 >= d.peak_fp32);
    CHECK(d.peak_fp4.flop_per_s >= 0);
    if (d.peak_fp4.flop_per_s > 0) CHECK(d.peak_fp4 > d.peak_fp8);
    CHECK(d.architecture != Architecture::kUnknown);
    CHECK(d.peak_clock_mhz >= 0);
    CHECK(d.tdp_watts > 0);
    CHECK(d.power_limit_watts == 0);
    CHECK(d.clock_mhz == 0);
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

namespace parasim::cost {

TEST_CASE("Blackwell Ultra presets: HGX B300 and GB300 NVL72 carry the datasheet figures") {
  const ClusterPreset* b300 = find_cluster_preset("dgx-b300");
  REQUIRE(b300 != nullptr);
  const ClusterSpec& b = b300->spec;
  // HGX B300, 8 GPUs: 36 PFLOP/s BF16, 18 TF32, 72 FP8 sparse; FP4 105 dense; FP32 600 TFLOP/s;
  // 2.3 TB HBM3e; NVLink 14.4 TB/s; 8x ConnectX-8 800 Gb/s.
  CHECK(b.gpus_per_node == 8);
  CHECK(b.device.peak_bf16.flop_per_s == 2250e12);
  CHECK(b.device.peak_bf16.flop_per_s == doctest::Approx(36e15 / 8 / 2));
  CHECK(b.device.peak_tf32.flop_per_s == doctest::Approx(18e15 / 8 / 2));
  CHECK(b.device.peak_fp8.flop_per_s == doctest::Approx(72e15 / 8 / 2));
  CHECK(b.device.peak_fp4.flop_per_s == doctest::Approx(105e15 / 8));
  CHECK(b.device.peak_fp32.flop_per_s == doctest::Approx(600e12 / 8));
  CHECK(b.device.hbm_capacity.value == 288e9);
  CHECK(b.device.hbm_bandwidth.bytes_per_s == 8000e9);
  CHECK(b.device.architecture == Architecture::kBlackwell);
  CHECK(b.device.tdp_watts == 1100);
  CHECK(b.device.peak_clock_mhz == 0);  // not published
  CHECK(b.intra_node.bandwidth.bytes_per_s == doctest::Approx(14.4e12 / 8 / 2));
  CHECK(b.inter_node.bandwidth.bytes_per_s == 800e9 / 8);
  // B200's measured kernels, the bf16 ceiling from TE's B300 GEMM profile.
  const KernelEfficiency& b200k = find_cluster_preset("dgx-b200")->spec.device.kernels;
  CHECK(b.device.kernels.gemm_ceiling_bf16 ==
        doctest::Approx(2.0 * 15872 * 4096 * 12288 / 1.071e-3 / 2250e12));
  CHECK(b.device.kernels.gemm_ceiling_fp8 == b200k.gemm_ceiling_fp8);
  CHECK(b.device.kernels.memory_streaming == b200k.memory_streaming);

  const ClusterPreset* gb300 = find_cluster_preset("gb300-nvl72");
  REQUIRE(gb300 != nullptr);
  ClusterSpec g = gb300->spec;
  CHECK(g.gpus_per_node == 72);
  CHECK(g.gpus_per_host == 4);
  g.nodes = 2;
  CHECK(g.hosts() == 36);
  // Rack, sparse: 360 PFLOP/s BF16, 720 FP8, 180 TF32; FP4 1,080 dense; 576 TB/s.
  CHECK(g.device.peak_bf16.flop_per_s == doctest::Approx(360e15 / 72 / 2));
  CHECK(g.device.peak_fp8.flop_per_s == doctest::Approx(720e15 / 72 / 2));
  CHECK(g.device.peak_tf32.flop_per_s == doctest::Approx(180e15 / 72 / 2));
  CHECK(g.device.peak_fp4.flop_per_s == doctest::Approx(1080e15 / 72));
  CHECK(g.device.hbm_bandwidth.bytes_per_s == doctest::Approx(576e12 / 72));
  CHECK(g.device.hbm_capacity.value == 288e9);
  CHECK(g.device.tdp_watts == 1400);
  CHECK(g.inter_node.bandwidth.bytes_per_s == 100e9);
  CHECK(g.intra_node.bandwidth.bytes_per_s == 900e9);
  // No measurements of its own: B300's values, and the sources and the preset say so.
  CHECK(g.device.kernels == b.device.kernels);
  CHECK(gb300->kernel_sources.gemm_ceiling_bf16.rfind("no measurement of GB300", 0) == 0);
  CHECK(gb300->source.find("NO KERNEL MEASUREMENTS OF GB300") != std::string::npos);
}

TEST_CASE("H100 NVL, MI325X and MI355X presets carry the datasheet figures") {
  const ClusterPreset* nvl = find_cluster_preset("h100-nvl-pair");
  REQUIRE(nvl != nullptr);
  const ClusterSpec& n = nvl->spec;
  // Datasheet, sparse: 1,671 TFLOP/s BF16, 835 TF32, 3,341 FP8; 60 FP32; 94 GB at 3.9 TB/s;
  // NVLink bridge 600 GB/s bidirectional.
  CHECK(n.gpus_per_node == 2);
  CHECK(n.device.peak_bf16.flop_per_s == doctest::Approx(1671e12 / 2));
  CHECK(n.device.peak_tf32.flop_per_s == doctest::Approx(835e12 / 2));
  CHECK(n.device.peak_fp8.flop_per_s == doctest::Approx(3341e12 / 2));
  CHECK(n.device.peak_fp32.flop_per_s == 60e12);
  CHECK(n.device.hbm_capacity.value == 94e9);
  CHECK(n.device.hbm_bandwidth.bytes_per_s == 3900e9);
  CHECK(n.device.architecture == Architecture::kHopper);
  CHECK(n.intra_node.bandwidth.bytes_per_s == 600e9 / 2);
  CHECK(n.device.kernels == find_cluster_preset("dgx-h100")->spec.device.kernels);
  CHECK(nvl->source.find("NO KERNEL MEASUREMENTS OF H100 NVL") != std::string::npos);

  const ClusterSpec& mi300x = find_cluster_preset("mi300x-8x")->spec;
  const ClusterPreset* mi325 = find_cluster_preset("mi325x-8x");
  REQUIRE(mi325 != nullptr);
  const DeviceSpec& m3 = mi325->spec.device;
  CHECK(m3.peak_bf16 == mi300x.device.peak_bf16);  // the same CDNA 3 compute
  CHECK(m3.peak_fp8 == mi300x.device.peak_fp8);
  CHECK(m3.hbm_capacity.value == 256e9);
  CHECK(m3.hbm_bandwidth.bytes_per_s == 6000e9);
  CHECK(m3.architecture == Architecture::kCdna3);
  CHECK(m3.peak_clock_mhz == 2100);
  CHECK(m3.tdp_watts == 1000);
  CHECK(m3.kernels == mi300x.device.kernels);
  CHECK(mi325->source.find("NO KERNEL MEASUREMENTS OF MI325X") != std::string::npos);

  const ClusterPreset* mi355 = find_cluster_preset("mi355x-8x");
  REQUIRE(mi355 != nullptr);
  const DeviceSpec& m4 = mi355->spec.device;
  // 256 CUs x FLOP/clock x 2.4 GHz: BF16 4096, FP8 8192, FP4 16384, FP32 256 per CU and clock.
  CHECK(m4.peak_bf16.flop_per_s == doctest::Approx(256.0 * 4096 * 2.4e9).epsilon(1e-4));
  CHECK(m4.peak_fp8.flop_per_s == doctest::Approx(256.0 * 8192 * 2.4e9).epsilon(1e-4));
  CHECK(m4.peak_fp4.flop_per_s == doctest::Approx(256.0 * 16384 * 2.4e9).epsilon(1e-4));
  CHECK(m4.peak_fp32.flop_per_s == doctest::Approx(256.0 * 256 * 2.4e9).epsilon(1e-3));
  CHECK(m4.peak_fp8.flop_per_s == 5033.2e12);
  CHECK(m4.peak_fp4.flop_per_s == 10066.3e12);
  CHECK(m4.peak_tf32 == m4.peak_fp32);  // no TF32 matrix rate on CDNA 4
  CHECK(m4.hbm_capacity.value == 288e9);
  CHECK(m4.hbm_bandwidth.bytes_per_s == 8000e9);
  CHECK(m4.sm_count == 256);
  CHECK(m4.architecture == Architecture::kCdna4);
  CHECK(m4.peak_clock_mhz == 2400);
  CHECK(m4.tdp_watts == 1400);
  CHECK(mi355->spec.intra_node.bandwidth.bytes_per_s == doctest::Approx(7 * 153.6e9 / 2));
  CHECK(mi355->spec.intra_node.peer_bandwidth.bytes_per_s == doctest::Approx(153.6e9 / 2));
  CHECK(mi355->source.find("NO KERNEL MEASUREMENTS OF MI355X") != std::string::npos);
}

TEST_CASE("the clock of each preset's peaks: cores x FLOP per clock x clock gives the peak") {
  // H100 SXM5: 528 tensor cores x 1024 dense bf16 FLOP/clock x 1.83 GHz.
  const DeviceSpec& h100 = find_cluster_preset("dgx-h100")->spec.device;
  CHECK(h100.peak_clock_mhz == 1830);
  CHECK(h100.peak_bf16.flop_per_s == doctest::Approx(528.0 * 1024 * 1.83e9).epsilon(1e-3));
  // B200: 148 SMs x 8192 x 1.85 GHz.
  const DeviceSpec& b200 = find_cluster_preset("dgx-b200")->spec.device;
  CHECK(b200.peak_clock_mhz == 1850);
  CHECK(b200.peak_bf16.flop_per_s == doctest::Approx(148.0 * 8192 * 1.85e9).epsilon(5e-3));
  // A100: 432 tensor cores x 512 x 1.41 GHz; MI300X: 304 CUs x 2048 x 2.1 GHz.
  const DeviceSpec& a100 = find_cluster_preset("dgx-a100-80gb")->spec.device;
  CHECK(a100.peak_bf16.flop_per_s == doctest::Approx(432.0 * 512 * 1410e6).epsilon(1e-3));
  const DeviceSpec& mi300x = find_cluster_preset("mi300x-8x")->spec.device;
  CHECK(mi300x.peak_bf16.flop_per_s == doctest::Approx(304.0 * 2048 * 2100e6).epsilon(1e-3));
  // Not published: GB200's 2.5 PFLOP/s is not B200's SMs at B200's clock.
  CHECK(find_cluster_preset("gb200-nvl72")->spec.device.peak_clock_mhz == 0);
  // H800: NVLink 400 GB/s bidirectional = 200 per direction; the H100 SXM5's compute.
  const ClusterSpec& h800 = find_cluster_preset("dgx-h800")->spec;
  CHECK(h800.intra_node.bandwidth.bytes_per_s == 400e9 / 2);
  CHECK(h800.device.peak_bf16 == h100.peak_bf16);
}

}  // namespace parasim::cost
