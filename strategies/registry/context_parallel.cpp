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

// DeepSpeed-Ulysses and Transformer Engine's a2a split each rank's heads over the all-to-all
// group: TE asserts num_heads % cp_size == 0 for Q and for K/V (TE d0067d0d,
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py:4246, a2a;
// :1492 flash_attn_a2a_communicate views the heads as [cp_size_a2a, heads / cp_size_a2a] under
// a2a+p2p), on the heads of one TP rank. K/V heads fewer than the group are refused as TE
// refuses them (DeepSpeed's uneven-heads all-to-all, deepspeed/sequence/layer.py:131, is not
// modelled).
void heads_split_over(const Scenario& s, int group, const char* what, cost::Diagnostics& d) {
  const long long tp = s.parallel.tp;
  const long long heads = s.model.heads, kv = s.model.kv_heads > 0 ? s.model.kv_heads : heads;
  for (const auto& [name, n] : {std::pair<const char*, long long>{"heads", heads}, {"kv_heads", kv}}) {
    if (n % tp != 0 || (n / tp) % group != 0) {
      d.add("/parallel/cp_variant",
            fmt::format("\"{}\" splits each tensor-parallel rank's attention heads over {} "
                        "ranks: model {} ({}) / tp ({}) must be a multiple of {} (Transformer "
                        "Engine refuses it; with fewer kv_heads use \"ring\" or \"allgather\")",
                        s.parallel.cp_comm == CpComm::kAllToAll ? "a2a" : "a2a+p2p", group, name,
                        n, tp, what));
    }
  }
}

void heads_split_over_cp(const Scenario& s, cost::Diagnostics& d) {
  heads_split_over(s, s.parallel.cp, "cp", d);
}

// Megatron-LM requires --hierarchical-context-parallel-sizes with a2a+p2p and their product to
// be cp (Megatron-LM d98e8a64, megatron/training/arguments.py:580-585).
void hierarchical_sizes(const Scenario& s, cost::Diagnostics& d) {
  const int a2a = s.parallel.cp_a2a_size, cp = s.parallel.cp;
  if (a2a == 0) {
    d.add("/parallel/cp_a2a_size",
          "\"a2a+p2p\" needs cp_a2a_size, the all-to-all group (Megatron-LM's "
          "--hierarchical-context-parallel-sizes [cp_a2a_size, cp / cp_a2a_size])");
    return;
  }
  if (cp % a2a != 0 || a2a == cp) {
    d.add("/parallel/cp_a2a_size",
          fmt::format("cp_a2a_size ({}) must divide cp ({}) and be smaller (equal to cp is "
                      "\"a2a\")",
                      a2a, cp));
    return;
  }
  heads_split_over(s, a2a, "cp_a2a_size", d);
}

void a2a_size_needs_hierarchical(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.cp_a2a_size != 0) {
    d.add("/parallel/cp_a2a_size", "cp_a2a_size applies to \"cp_variant\": \"a2a+p2p\" only");
  }
}

Entry mode(const std::string& name, CpComm comm, const std::string& description) {
  Entry e;
  e.kind = EntryKind::kContextParallel;
  e.name = e.value = name;
  e.description = description;
  e.paper = "Liu et al. 2023, Ring Attention, arXiv 2310.01889";
  e.rules = {sequence_splits_in_zigzag, needs_flash_attention, modelled_combinations,
             ring_on_rails};
  e.builder = "cp_attention.cpp: cp_attention_forward, cp_attention_backward";
  e.traits = ContextParallelTraits{.comm = comm};
  return e;
}

}  // namespace

std::vector<Entry> context_parallel_entries() {
  Entry ulysses = mode("a2a", CpComm::kAllToAll,
                       "DeepSpeed-Ulysses: Q, K, V all-to-all to whole sequences of heads / cp "
                       "heads, attention, output all-to-all back; 2 B S (a + kv) d (cp-1) / "
                       "(cp^2 t) bytes per rank per layer forward; heads and kv_heads per tp "
                       "rank divisible by cp");
  ulysses.paper = "Jacobs et al. 2023, DeepSpeed Ulysses, arXiv 2309.14509";
  ulysses.rules.push_back(heads_split_over_cp);
  Entry hierarchical = mode("a2a+p2p", CpComm::kAllToAllP2p,
                            "Megatron-core's hierarchical CP: a2a inside groups of cp_a2a_size "
                            "ranks, K/V ring over the cp / cp_a2a_size groups");
  hierarchical.paper = "Jacobs et al. 2023, arXiv 2309.14509 (a2a); Liu et al. 2023, arXiv "
                       "2310.01889 (ring); Megatron-core --cp-comm-type a2a+p2p";
  hierarchical.rules.push_back(hierarchical_sizes);
  ParameterSpec a2a;
  a2a.path = "/parallel/cp_a2a_size";
  a2a.unit = "GPUs";
  a2a.default_value = "none (required)";
  a2a.min = 2;
  a2a.max = 1 << 12;
  a2a.meaning = "consecutive cp ranks exchanging heads by all-to-all; the ring runs over "
                "cp / cp_a2a_size groups";
  a2a.when_not_taken = a2a_size_needs_hierarchical;
  hierarchical.parameters = {a2a};
  return {mode("ring", CpComm::kRing,
               "K/V blocks passed around the cp ring while attention computes (zigzag-balanced "
               "causal work); 4 B S h (cp-1)/cp bytes per rank per layer forward"),
          mode("allgather", CpComm::kAllGather,
               "every K/V block all-gathered before attention computes; the same bytes, nothing "
               "overlapped"),
          ulysses, hierarchical};
}

}  // namespace parasim::strat
