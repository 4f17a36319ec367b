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
// Format version 2 adds what `parasim calibrate` measured (measured_tables.hpp), read by
// measured_tables_reader.hpp and written by profile_writer.hpp:
//     "provenance": { "backend": "cuda", "device": "NVIDIA H200", ... },
//     "complete": true,
//     "measurements": { "gemm": [...], "collectives": [...], "solvers": [...], "norms": [...],
//                       "launch_overhead": {...}, "overlap": [...] }
// Those three keys need "parasim_profile": 2; everything of version 1 keeps its meaning, and a
// version 1 file stays valid. How make_cost_model uses the tables: docs/profile.md and
// cost_model.hpp. Explicit scalar overrides win over what the tables imply
// (memory_efficiency, device.kernel_launch_overhead).

#include <optional>
#include <string>

#include "costmodel/compute_cost.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/hardware.hpp"
#include "costmodel/json_fields.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

struct Profile {
  std::string file;
  std::string source;
  GemmEfficiencyParams gemm;
  // Unset: the device's streaming fraction (KernelEfficiency), or what the measured RMSNorm
  // points imply.
  std::optional<double> memory_efficiency;
  // Overrides applied to a cluster (unset fields keep the scenario's values).
  std::optional<FlopRate> peak_bf16, peak_fp16, peak_fp32, peak_tf32, peak_fp8;
  std::optional<Bandwidth> hbm_bandwidth;
  std::optional<sim::Time> kernel_launch_overhead;
  std::optional<Bandwidth> intra_bandwidth, inter_bandwidth;
  std::optional<sim::Time> intra_latency, inter_latency;

  // Version 2: measured tables (empty for a version 1 file).
  MeasuredTables measured;

  // The overrides applied; a profile that sets the GEMM ceiling or measured GEMMs marks the
  // device's kernel efficiencies calibrated (no uncalibrated-device warning).
  ClusterSpec apply(ClusterSpec cluster) const;
};

// The newest profile version this parasim reads (and the one profile_writer.hpp writes).
inline constexpr int kProfileVersion = 2;

// Throws InputError listing every problem of the file; a file over `max_file_bytes` (16 MiB by
// default, kMaxInputFileBytes, as for scenarios) is refused before it is read.
Profile load_profile(const std::string& path, std::size_t max_file_bytes = kMaxInputFileBytes);
Profile parse_profile(const std::string& text, const std::string& file_name,
                      std::size_t max_file_bytes = kMaxInputFileBytes);

// The cost model for a cluster, with a profile's parameters when one is given. Without a profile,
// or with one without measured tables, the cost model is the analytical one (with the profile's
// overrides). With measured tables (docs/profile.md, "How the cost model uses the tables"):
//   gemm          MeasuredGemmModel over the roofline of the (overridden) device;
//   collectives   calibrated plans (measured_collectives.hpp);
//   launch        the measured median replaces device.kernel_launch_overhead, unless the profile
//                 sets device.kernel_launch_overhead itself;
//   norms         memory_efficiency = achieved bytes/s of the largest plain (not fused) RMSNorm
//                 point / device HBM bandwidth, clamped to (0, 1], unless memory_efficiency is
//                 set explicitly;
//   overlap       CostModel's overlap slowdowns (median over the points of overlapped / alone);
//   solvers       CostModel::measured_solver_time.
// Adds a warning when the provenance device is another model than the cluster's device
// (profile_fit.hpp, device_model; the commands refuse such a profile unless allowed).
CostModel make_cost_model(const ClusterSpec& cluster, const Profile* profile);

}  // namespace parasim::cost
