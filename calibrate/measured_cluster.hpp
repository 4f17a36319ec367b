#pragma once
// parasim::calib measured cluster — a ClusterSpec standing for the machine a profile was
// measured on, for `parasim calibrate --check` (which predicts held-out points through the same
// CostModel that `simulate --profile` uses, so it checks exactly that path).
//
// The measured tables do not say what the datasheet peaks are, so they are inferred:
//   peak(dtype)   = best measured GEMM FLOP rate of that dtype / that dtype's GEMM ceiling of
//                   the conservative kernel efficiencies (kernel_efficiency.hpp), the device's
//                   (so the roofline's best shape matches the best measurement; the measured
//                   correction then does the rest); a dtype without GEMM points takes fp32's,
//                   or 1 TFLOP/s when there is none;
//   hbm_bandwidth = best measured RMSNorm rate (bytes moved / median), or 1 TB/s without norms;
//   sm_count      = 0 (no wave quantization: the measured correction carries shape effects);
//   links         = 100 GB/s, 1 us: the calibrated collective plans reproduce the measured times
//                   whatever the link figures are (measured_collectives.hpp);
//   ranks         = the placement of the first collective series (else one GPU).

#include "costmodel/hardware.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::calib {

cost::ClusterSpec measured_cluster(const cost::MeasuredTables& tables);

}  // namespace parasim::calib
