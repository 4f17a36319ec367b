#pragma once
// parasim::cost kernel presets — the measured KernelEfficiency of each preset device, with the
// source of every field (kernel_presets.cpp). The cluster presets (cluster_presets.hpp) attach
// them to their DeviceSpecs. Every value is a published measurement of the device (or of one
// with the same die, stated), converted to a fraction of the preset's datasheet peak; none is
// fitted to training-step times.
//
// The measurements and their conversions are collected in the research report "Kernel
// efficiency by device, shape and dtype" (the project's issue 14); each source text below names
// the original (repository and file at a commit, paper section, or URL).

#include <string>

#include "costmodel/kernel_efficiency.hpp"

namespace parasim::cost {

struct KernelPreset {
  KernelEfficiency kernels;  // calibrated = true
  KernelEfficiencySources sources;
};

// HBM: the 80 GB part (HBM2e, 2,039 GB/s) and the 40 GB part (HBM2, 1,555 GB/s) differ only in
// their measured streaming fraction; compute is the same GA100.
KernelPreset a100_kernels(bool hbm2e_80gb);
KernelPreset h100_sxm_kernels();
KernelPreset h200_sxm_kernels();
KernelPreset b200_kernels();
KernelPreset mi300x_kernels();
// B300 (HGX B300, Blackwell Ultra): B200's, with the 16-bit ceiling from Transformer Engine's
// published B300 GEMM profile (kernel_presets.cpp).
KernelPreset b300_kernels();

// A device with no published kernel measurements of its own: `measured`'s values unchanged, every
// source text prefixed with "no measurement of <device>: <measured_on>'s" so that it cannot be
// read as the device's own. `measured_on` names the device they come from and why it is nearest.
KernelPreset borrowed_kernels(KernelPreset measured, const std::string& device,
                              const std::string& measured_on);

}  // namespace parasim::cost
