// Collective fabrics (collective_fabric.hpp): presets carry their published figures, a written-out
// cluster the defaults.
#include "costmodel/collective_fabric.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"

using namespace parasim::cost;

TEST_CASE("Cluster presets carry the published NCCL fabric figures") {
  const ClusterSpec& a100 = find_cluster_preset("dgx-a100-80gb")->spec;
  CHECK(a100.fabric.published);
  CHECK(a100.fabric.intra_node_efficiency == doctest::Approx(235.65 / 300.0));
  CHECK(a100.fabric.inter_node_efficiency == doctest::Approx(23.94 / 25.0));
  CHECK(a100.fabric.cpu == HostCpuVendor::kAmd);
  CHECK(a100.fabric.arch == NcclGpuArch::kAmpere);
  CHECK_FALSE(a100.fabric.nvls);
  for (const char* name : {"dgx-h100", "hgx-h200"}) {
    CAPTURE(name);
    const ClusterSpec& h = find_cluster_preset(name)->spec;
    CHECK(h.fabric.published);
    CHECK(h.fabric.arch == NcclGpuArch::kHopper);
    CHECK(h.fabric.intra_node_efficiency == doctest::Approx(0.80));
    CHECK(h.fabric.inter_node_efficiency == doctest::Approx(0.97));
    CHECK(h.fabric.nvls);
    CHECK(h.fabric.nvls_allreduce_busbw_share == doctest::Approx(480.0 / 450.0));
  }
  // DGX B200: nccl-tests on 8 B200 (ring 682.2, NVLS 838.0 GB/s busbw of 900), 16 channels.
  const CollectiveFabric& b200 = find_cluster_preset("dgx-b200")->spec.fabric;
  CHECK(b200.published);
  CHECK(b200.intra_node_efficiency == doctest::Approx(682.2 / 900.0));
  CHECK(b200.nvls);
  CHECK(b200.nvls_allreduce_busbw_share == doctest::Approx(838.0 / 900.0));
  CHECK(b200.intra_node_channels == 16);
  CHECK(b200.cpu == HostCpuVendor::kIntel);
  // GB200 NVL72: NVLink5's ring share measured on Azure's GB200 trays; NVLS still assumed.
  const CollectiveFabric& gb200 = find_cluster_preset("gb200-nvl72")->spec.fabric;
  CHECK(gb200.intra_node_efficiency == doctest::Approx(679.61 / 900.0));
  CHECK_FALSE(gb200.published);
  // No published NCCL figure for these: assumptions, marked as such.
  CHECK_FALSE(find_cluster_preset("perlmutter-a100")->spec.fabric.published);
  CHECK(find_cluster_preset("perlmutter-a100")->spec.fabric.cpu == HostCpuVendor::kAmd);
  CHECK_FALSE(find_cluster_preset("mi300x-8x")->spec.fabric.published);
  // Every preset's figures satisfy the invariants.
  for (const ClusterPreset& p : cluster_presets()) {
    CAPTURE(p.name);
    CHECK(p.spec.fabric.intra_node_efficiency > 0);
    CHECK(p.spec.fabric.intra_node_efficiency <= 1);
    CHECK(p.spec.fabric.inter_node_efficiency > 0);
    CHECK(p.spec.fabric.inter_node_efficiency <= 1);
    CHECK(p.spec.fabric.intra_node_channels >= 1);
  }
}

TEST_CASE("A written-out cluster gets the lowest published shares and NCCL's default rows") {
  const CollectiveFabric f = preset_collective_fabric("custom");
  CHECK_FALSE(f.published);
  CHECK(f.intra_node_efficiency == kDefaultIntraNodeEfficiency);
  CHECK(f.inter_node_efficiency == kDefaultInterNodeEfficiency);
  CHECK(f.intra_node_efficiency <= find_cluster_preset("dgx-h100")->spec.fabric.intra_node_efficiency);
  CHECK(f.inter_node_efficiency <= find_cluster_preset("dgx-h100")->spec.fabric.inter_node_efficiency);
  CHECK(f.cpu == HostCpuVendor::kIntel);
  CHECK_FALSE(f.nvls);
  CHECK(ClusterSpec{}.fabric.intra_node_efficiency == kDefaultIntraNodeEfficiency);
}

TEST_CASE("Collectives on a cluster without published NCCL figures warn once, naming it") {
  ClusterSpec custom = find_cluster_preset("dgx-h100")->spec;
  custom.name = "my-cluster";
  custom.fabric = preset_collective_fabric("custom");
  const CostModel costs(custom);
  costs.collective(CollectiveKind::kAllReduce, Bytes{1e6}, {1, 1, 1});  // free: nothing to say
  CHECK(costs.warnings().empty());
  costs.collective(CollectiveKind::kAllReduce, Bytes{1e6}, {8, 8, 1});
  costs.collective(CollectiveKind::kAllGather, Bytes{1e6}, {8, 8, 1});
  REQUIRE(costs.warnings().size() == 1);
  CHECK(costs.warnings().list()[0].find("cluster \"my-cluster\": no published NCCL figures") !=
        std::string::npos);
  const CostModel published(find_cluster_preset("dgx-h100")->spec);
  published.collective(CollectiveKind::kAllReduce, Bytes{1e6}, {8, 8, 1});
  CHECK(published.warnings().empty());
}
