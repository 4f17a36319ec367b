// The CostModel warns once when its device has no measured kernel efficiencies.
#include <doctest/doctest.h>

#include <string>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/profile.hpp"

namespace parasim::cost {
namespace {

ClusterSpec written_out() {
  ClusterSpec c = find_cluster_preset("dgx-h100")->spec;
  c.name = "custom";
  c.device.name = "X1";
  c.device.kernels = conservative_kernel_efficiency();
  return c;
}

int count_uncalibrated(const CostWarnings& w) {
  int n = 0;
  for (const std::string& line : w.list()) {
    if (line.find("has no measured kernel efficiencies") != std::string::npos) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("a device without measured kernel efficiencies is warned about once") {
  const CostModel costs(written_out());
  REQUIRE(count_uncalibrated(costs.warnings()) == 1);
  const std::string line = costs.warnings().list().front();
  CHECK(line.find("device \"X1\" has no measured kernel efficiencies: using conservative "
                  "defaults (GEMM 0.65 of peak") != std::string::npos);
  CHECK(line.find("run parasim calibrate") != std::string::npos);
  // Costing many kernels adds nothing; copies share the one sink.
  const CostModel copy = costs;
  for (int i = 0; i < 3; ++i) copy.gemm(GemmShape{1024, 1024, 1024, 1, Dtype::kBf16});
  CHECK(copy.warnings().size() == 1);
}

TEST_CASE("presets, scenario blocks and calibrated profiles are not warned about") {
  CHECK(count_uncalibrated(CostModel(find_cluster_preset("dgx-a100-80gb")->spec).warnings()) == 0);
  ClusterSpec vouched = written_out();
  vouched.device.kernels.calibrated = true;  // what a scenario's kernel_efficiency block sets
  CHECK(count_uncalibrated(CostModel(vouched).warnings()) == 0);
  const Profile ceiling =
      parse_profile(R"({"parasim_profile": 1, "gemm": {"ceiling": 0.7}})", "p.json");
  CHECK(count_uncalibrated(make_cost_model(written_out(), &ceiling).warnings()) == 0);
  // A profile that measures only links leaves the kernels uncalibrated.
  const Profile links =
      parse_profile(R"({"parasim_profile": 1, "intra_node": {"bandwidth": "400 GB/s"}})", "p.json");
  CHECK(count_uncalibrated(make_cost_model(written_out(), &links).warnings()) == 1);
  CHECK(make_cost_model(written_out(), &links).memory_efficiency() == 0.77);
}

}  // namespace parasim::cost
