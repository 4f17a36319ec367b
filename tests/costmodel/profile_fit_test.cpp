// costmodel/profile_fit.hpp: a measured profile applies to the device it was measured on, by
// model; a CPU's or another GPU's profile, or a GEMM faster than the peak, is refused with the
// field and both devices named, unless the user allows it.
#include "costmodel/profile_fit.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"

namespace parasim::cost {
namespace {

Profile measured_on(const std::string& backend, const std::string& device, double gemm_s) {
  Profile p;
  p.file = "p.json";
  p.measured.provenance.backend = backend;
  p.measured.provenance.device = device;
  GemmPoint g;
  g.shape = GemmShape{4096, 4096, 4096, 1, Dtype::kBf16};
  g.time.median_s = g.time.p20_s = g.time.p80_s = gemm_s;
  g.time.samples = 5;
  p.measured.gemm.push_back(g);
  return p;
}

ClusterSpec h100() { return find_cluster_preset("dgx-h100")->spec; }

}  // namespace

TEST_CASE("device_model: the GPU model word of a device name, CUDA's or a preset's") {
  CHECK(device_model("NVIDIA H100 80GB HBM3") == "h100");
  CHECK(device_model("H100-SXM5-80GB") == "h100");
  CHECK(device_model("NVIDIA A100-SXM4-40GB") == "a100");
  CHECK(device_model("MI300X-OAM-192GB") == "mi300x");
  CHECK(device_model("NVIDIA GH200 480GB") == "gh200");
  CHECK(device_model("Intel(R) Xeon(R) Processor") == "intel(r) xeon(r) processor");
}

TEST_CASE("check_profile_fits: same model passes; cpu, other model and a too-fast GEMM refused") {
  // 2 x 4096^3 FLOP at the H100's 989 TFLOP/s bf16 peak: about 139 us at the least.
  CHECK_NOTHROW(check_profile_fits(measured_on("cuda", "NVIDIA H100 80GB HBM3", 2e-4), h100(), false));
  CHECK_THROWS_WITH_AS(
      check_profile_fits(measured_on("cpu", "Intel(R) Xeon(R) Processor", 0.5), h100(), false),
      doctest::Contains("p.json: /provenance/backend: the profile was measured by the cpu backend"),
      InputError);
  CHECK_THROWS_WITH_AS(
      check_profile_fits(measured_on("cuda", "NVIDIA A100-SXM4-80GB", 5e-4), h100(), false),
      doctest::Contains("/provenance/device: the profile was measured on \"NVIDIA A100-SXM4-80GB\" "
                        "(a100), but the scenario's device is \"H100-SXM5-80GB\" (h100)"),
      InputError);
  CHECK_THROWS_WITH_AS(
      check_profile_fits(measured_on("cuda", "NVIDIA H100 80GB HBM3", 1e-4), h100(), false),
      doctest::Contains("/measurements/gemm/0/median_s: 0.0001 s for a 4096x4096x4096 GEMM is "
                        "faster than the peak"),
      InputError);
  // Allowed, nothing is checked; a profile of overrides only (no measurements) is never foreign.
  CHECK_NOTHROW(check_profile_fits(measured_on("cpu", "Xeon", 1e-300), h100(), true));
  Profile overrides;
  overrides.file = "v1.json";
  CHECK_NOTHROW(check_profile_fits(overrides, h100(), false));
}

}  // namespace parasim::cost
