// parasim_collectives — what the analytical collective planner predicts: time and nccl-tests bus
// bandwidth of all-reduce and all-gather over a cluster preset, for a few group placements and
// message sizes (nccl-tests S: bytes per rank for all-reduce, total gathered bytes for
// all-gather). It prints figures; nothing is checked. The uncontended simulated time of a plan
// equals estimate_time() (collective_cost.hpp), which is what is printed, with NCCL's algorithm and
// protocol choice (nccl_model.hpp).
//
//   parasim_collectives                       dgx-a100-80gb: 8 GPUs (1 node), 64 and 1024 (8 per node)
//   parasim_collectives --preset dgx-h100

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/collective_cost.hpp"
#include "costmodel/cost_model.hpp"

namespace {

using namespace parasim;

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--preset NAME]   (default dgx-a100-80gb)\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset_name = "dgx-a100-80gb";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--preset" && i + 1 < argc) {
      preset_name = argv[++i];
    } else {
      return usage(argv[0]);
    }
  }
  const cost::ClusterPreset* preset = cost::find_cluster_preset(preset_name);
  if (preset == nullptr) {
    std::fprintf(stderr, "%s: unknown cluster preset \"%s\"\n", argv[0], preset_name.c_str());
    return 2;
  }
  const int g = preset->spec.gpus_per_node;
  cost::ClusterSpec cluster = preset->spec;
  cluster.nodes = 128;
  const cost::CostModel costs(cluster);
  const cost::GroupPlacement groups[] = {{g, g, 1}, {8 * g, g, 8}, {128 * g, g, 128}};
  const double sizes[] = {8.0, 65536.0, 1048576.0, 16777216.0, 268435456.0, 1073741824.0};
  const char* size_names[] = {"8 B", "64 KiB", "1 MiB", "16 MiB", "256 MiB", "1 GiB"};
  fmt::print("{}: time (us) and nccl-tests busbw (GB/s) of the analytical plan\n", preset->name);
  for (cost::CollectiveKind kind : {cost::CollectiveKind::kAllReduce, cost::CollectiveKind::kAllGather}) {
    for (const cost::GroupPlacement& p : groups) {
      fmt::print("\n{} on {} GPUs ({} per node x {} nodes)\n", cost::collective_name(kind), p.size,
                 p.gpus_per_node_in_group, p.nodes_spanned);
      fmt::print("  {:>8}  {:>12}  {:>10}  {}\n", "size", "time us", "busbw GB/s", "plan");
      for (std::size_t i = 0; i < std::size(sizes); ++i) {
        const cost::CollectivePlan plan = costs.collective(kind, cost::Bytes{sizes[i]}, p);
        const sim::Time t = cost::estimate_time(plan, cluster);
        const double bus = cost::busbw(kind, p.size, plan.message, t).bytes_per_s / 1e9;
        fmt::print("  {:>8}  {:>12.2f}  {:>10.2f}  {}/{}\n", size_names[i], t.to_us(), bus,
                   cost::algorithm_name(plan.algorithm), cost::protocol_name(plan.protocol));
      }
    }
  }
  return 0;
}
