#pragma once
// parasim::cost profile fit — whether a measured profile may be applied to a cluster. A
// calibration profile describes the machine it was measured on; applied to another device it
// gives figures of neither (a CPU profile on an H100 scenario: 531 s per step), and a measured
// GEMM faster than the device's datasheet peak is a measurement error (a 1e-300 s GEMM gave an
// MFU of 116 %). Both are refused, naming the field and the two devices, unless the user says
// the profile is meant for the other device (`--allow-foreign-profile`).
//
// The device is compared by model (device_model): "NVIDIA H100 80GB HBM3" (what CUDA reports)
// and "H100-SXM5-80GB" (the preset) are both an H100; a profile measured by the cpu backend
// describes a CPU, never a GPU of the cluster.

#include <string>
#include <string_view>

#include "costmodel/hardware.hpp"
#include "costmodel/profile.hpp"

namespace parasim::cost {

// The model of a device name, lower case: the first word that is letters then digits (and
// optionally one letter), "h100", "a100", "b200", "mi300x", "gh200"; the whole name lower-cased
// when it has none (a CPU's).
std::string device_model(std::string_view name);

// Throws InputError (file: the profile's) when the profile's measurements do not describe
// `cluster`'s device: /provenance/device names another model, or the cpu backend measured it; a
// measured GEMM (/measurements/gemm/<i>/median_s) ran faster than the cluster's peak for
// its dtype (the profile's peak overrides applied). Every such problem is listed. Nothing is
// checked when `allow_foreign`, or for a profile without measurements (a version 1 file of
// overrides).
void check_profile_fits(const Profile& profile, const ClusterSpec& cluster, bool allow_foreign);

}  // namespace parasim::cost
