#pragma once
// parasim::cost::Profile — cost-model parameters read from a profile file (`--profile FILE`).
//
// Format version 1 (docs/profile.md): every field optional, each overriding the scenario's
// cluster or the analytical model's default:
//   { "parasim_profile": 1,
//     "source": "text saying where the numbers come from",
//     "device": { "peak": {"bf16": "750 TFLOP/s", ...}, "hbm_bandwidth": "3 TB/s",
//                 "kernel_launch_overhead": "3 us" },
//     "intra_node": { "bandwidth": "400 GB/s", "latency": "2 us" },
//     "inter_node": { "bandwidth": "45 GB/s", "latency": "6 us" },
//     "gemm": { "ceiling": 0.78, "tile_m": 128, "tile_n": 128, "k_half": 128, "k_ref": 4096 },
//     "memory_efficiency": 0.85 }
// Measured tables (GEMM by shape, alpha-beta collectives) join this format when calibration
// lands; the cost model reads them through the same CostModel interface.

#include <optional>
#include <string>

#include "costmodel/compute_cost.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/hardware.hpp"

namespace parasim::cost {

struct Profile {
  std::string file;
  std::string source;
  GemmEfficiencyParams gemm;
  double memory_efficiency = kDefaultMemoryEfficiency;
  // Overrides applied to a cluster (unset fields keep the scenario's values).
  std::optional<FlopRate> peak_bf16, peak_fp16, peak_fp32, peak_tf32, peak_fp8;
  std::optional<Bandwidth> hbm_bandwidth;
  std::optional<sim::Time> kernel_launch_overhead;
  std::optional<Bandwidth> intra_bandwidth, inter_bandwidth;
  std::optional<sim::Time> intra_latency, inter_latency;

  ClusterSpec apply(ClusterSpec cluster) const;
};

// Throws InputError listing every problem of the file.
Profile load_profile(const std::string& path);
Profile parse_profile(const std::string& text, const std::string& file_name);

// The cost model for a cluster, with a profile's parameters when one is given.
CostModel make_cost_model(const ClusterSpec& cluster, const Profile* profile);

}  // namespace parasim::cost
