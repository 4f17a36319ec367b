#pragma once
// parasim::cost cluster presets — named, sourced ClusterSpecs that scenarios refer to by name
// ("cluster": {"preset": "dgx-h100", "nodes": 16}).
//
// Every figure is either a vendor datasheet value (the page is named in `source`) or a labelled
// modelling assumption (latencies, kernel launch overhead, some NIC pairings); the `source` text of
// each preset says which. The device's kernel efficiencies are published measurements
// (kernel_presets.hpp), one source text per field in `kernel_sources`. Conventions follow hardware.hpp: peaks are dense (no sparsity),
// bandwidths are per GPU and per direction, sizes are decimal (1 GB = 1e9 B).
//
// Presets describe one node (`spec.nodes == 1`); a scenario sets the node count. The list is an
// explicit table in cluster_presets.cpp, in a fixed order, with unique names.

#include <string>
#include <string_view>
#include <vector>

#include "costmodel/hardware.hpp"
#include "costmodel/kernel_efficiency.hpp"

namespace parasim::cost {

struct ClusterPreset {
  std::string name;         // lookup key, "dgx-h100"; equals spec.name
  std::string description;  // one line for `--list-presets`
  std::string source;       // where each number comes from: datasheet pages and assumptions
  ClusterSpec spec;         // spec.device.kernels: measured, calibrated
  KernelEfficiencySources kernel_sources;
};

// All presets, in a fixed order. Built once on first use; safe to call from several threads.
const std::vector<ClusterPreset>& cluster_presets();

// The preset with exactly this name, or nullptr.
const ClusterPreset* find_cluster_preset(std::string_view name);

}  // namespace parasim::cost
