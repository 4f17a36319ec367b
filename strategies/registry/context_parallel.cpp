// Context parallelism (Liu et al. 2023, Ring Attention, arXiv 2310.01889; Megatron-LM's CP): the
// sequence split over cp ranks holding the same weights; chosen when cp > 1.
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

// Zigzag causal balance: each rank takes chunk c and chunk 2 cp - 1 - c.
void sequence_splits_in_zigzag(const Scenario& s, cost::Diagnostics& d) {
  const int cp = s.parallel.cp;
  if (s.model.seq_len % (2 * cp) != 0) {
    d.add("/parallel/cp", fmt::format("the sequence ({}) must split into 2 x cp = {} chunks "
                                      "(zigzag causal balance)",
                                      s.model.seq_len, 2 * cp));
  }
}

void needs_flash_attention(const Scenario& s, cost::Diagnostics& d) {
  if (s.training.attention != AttentionKind::kFlash) {
    d.add("/training/attention", "context parallelism runs with \"attention\": \"flash\" "
                                 "(ring attention exchanges K/V blocks of a fused kernel)");
  }
}

void modelled_combinations(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  // FSDP2 folds the cp ranks into its shard group (torchtitan); ZeRO-3 is not built with cp.
  if (s.model.low_rank.enabled() || (p.zero_stage == 3 && !p.fsdp2.enabled) || p.chunks > 1 ||
      splits_weight_gradient(p.schedule)) {
    d.add("/parallel/cp", "cp > 1 is modelled without low-rank placements, zero_stage 3, "
                          "interleaving or zero-bubble schedules");
  }
}

// Rails-only: the ring hops from replica c to c + 1 (stride tp). A group is tp x cp consecutive
// GPUs: it stays in a node when tp x cp divides gpus_per_node; otherwise some group crosses a
// node with a hop of tp, on a rail only if gpus_per_node divides tp.
void ring_on_rails(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const int gpn = s.cluster.gpus_per_node;
  if (!s.cluster.rails_only || s.cluster.nodes <= 1 || gpn <= 0) return;
  const long long group = static_cast<long long>(p.tp) * p.cp;
  if (p.tp % gpn != 0 && gpn % group != 0) {
    d.add("/cluster/rails_only",
          fmt::format("on a rails-only fabric the context-parallel ring must stay on a rail "
                      "between nodes: groups of tp x cp = {} GPUs cross nodes with hops of "
                      "tp = {} GPUs, which change the local index; use tp a multiple of "
                      "gpus_per_node ({}) or tp x cp dividing gpus_per_node",
                      group, p.tp, gpn));
  }
}

Entry mode(const std::string& name, bool allgather, const std::string& description) {
  Entry e;
  e.kind = EntryKind::kContextParallel;
  e.name = e.value = name;
  e.description = description;
  e.paper = "Liu et al. 2023, Ring Attention, arXiv 2310.01889";
  e.rules = {sequence_splits_in_zigzag, needs_flash_attention, modelled_combinations,
             ring_on_rails};
  e.builder = "layer_program.cpp: transformer_layer_program (context-parallel attention steps)";
  e.traits = ContextParallelTraits{.allgather = allgather};
  return e;
}

}  // namespace

std::vector<Entry> context_parallel_entries() {
  return {mode("ring", false,
               "K/V blocks passed around the cp ring while attention computes (zigzag-balanced "
               "causal work); 4 B S h (cp-1)/cp bytes per rank per layer forward"),
          mode("allgather", true,
               "every K/V block all-gathered before attention computes; the same bytes, nothing "
               "overlapped")};
}

}  // namespace parasim::strat
