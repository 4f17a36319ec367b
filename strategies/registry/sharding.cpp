// Data parallelism and ZeRO sharding (Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054; DDP
// buckets: Li et al. 2020, PyTorch Distributed, arXiv 2006.15704).
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

// ZeRO-3 gathers each layer's weights before its forward and backward; the builder emits those
// gathers for the flush schedules with one forward and one backward per micro-batch only.
void zero3_with_gpipe_or_1f1b(const Scenario& s, cost::Diagnostics& d) {
  const PipelineSchedule sc = s.parallel.schedule;
  if (sc != PipelineSchedule::kGpipe && sc != PipelineSchedule::kOneFOneB) {
    d.add("/parallel/zero_stage", fmt::format("zero_stage 3 is modelled with gpipe and 1f1b only "
                                              "(got {})",
                                              schedule_name(sc)));
  }
}

Entry stage(int zero_stage, const std::string& description, std::vector<Rule> rules) {
  Entry e;
  e.kind = EntryKind::kSharding;
  e.name = fmt::format("zero-{}", zero_stage);
  e.value = std::to_string(zero_stage);
  e.description = description;
  e.paper = zero_stage == 0 ? "Li et al. 2020, PyTorch Distributed, arXiv 2006.15704"
                            : "Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054";
  e.rules = std::move(rules);
  e.builder = "data_parallel_emission.cpp (buckets, reduce-scatter, all-gathers, the step)";
  e.traits = ShardingTraits{.zero_stage = zero_stage};
  return e;
}

}  // namespace

std::vector<Entry> sharding_entries() {
  return {stage(0, "plain data parallel: gradients all-reduced in buckets as the last "
                   "micro-batch's backward produces them, overlapped with the rest of the "
                   "backward; every replica holds all optimizer state",
                {}),
          stage(1, "optimizer state sharded over dp (each rank steps 1/dp of the parameters): "
                   "gradients reduce-scattered, updated weights all-gathered",
                {}),
          stage(2, "optimizer state and gradients sharded: the same reduce-scatter and "
                   "all-gather, each rank keeping only its gradient shard in memory",
                {}),
          stage(3, "weights sharded too: all-gathered per layer before its forward and its "
                   "backward",
                {zero3_with_gpipe_or_1f1b})};
}

}  // namespace parasim::strat
