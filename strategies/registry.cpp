#include "strategies/registry.hpp"

namespace parasim::strat {
namespace {

std::vector<RegistryEntry> build_registry() {
  return {
      {"parallel", "dp",
       "data parallel: gradients reduced in buckets as the last micro-batch's backward produces "
       "them, overlapped with the rest of the backward",
       "Li et al. 2020, PyTorch Distributed, arXiv 2006.15704",
       {{"dp", "GPUs", "1", "replicas"},
        {"dp_bucket", "bytes", "25 MB", "gradient bucket size"}}},
      {"parallel", "zero_stage",
       "ZeRO: 1 shards optimizer state, 2 also gradients (reduce-scatter, then all-gather of "
       "updated weights), 3 also weights (all-gather per layer before forward and backward)",
       "Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054",
       {{"zero_stage", "", "0", "0 to 3"}}},
      {"parallel", "tp",
       "Megatron tensor parallelism: column- then row-parallel GEMMs, two all-reduces forward "
       "and two backward per layer",
       "Shoeybi et al. 2019, Megatron-LM, arXiv 1909.08053",
       {{"tp", "GPUs", "1", "tensor-parallel group size"}}},
      {"parallel", "sequence_parallel",
       "Megatron sequence parallelism: all-gather and reduce-scatter instead of all-reduce; "
       "norm and dropout activations sharded along the sequence",
       "Korthikanti et al. 2022, arXiv 2205.05198",
       {{"sequence_parallel", "", "false", "needs tp > 1"}}},
      {"parallel", "pp",
       "pipeline parallelism: layers split evenly over stages or as given, activations and "
       "gradients sent point to point (1/t per TP rank, Megatron's scatter-gather)",
       "Narayanan et al. 2021, arXiv 2104.04473",
       {{"pp", "stages", "1", "pipeline stages"},
        {"stage_layers", "layers", "even", "one count per stage (per virtual stage with chunks)"},
        {"first_stage_layers", "layers", "even",
         "Megatron's --decoder-first-pipeline-num-layers; the rest split evenly"},
        {"last_stage_layers", "layers", "even",
         "Megatron's --decoder-last-pipeline-num-layers; the rest split evenly"}}},
      {"parallel", "cp",
       "context parallelism: the sequence split over cp ranks holding the same weights; ring "
       "attention passes K/V blocks while computing (zigzag-balanced causal work), or gathers "
       "them first; 4 B S h (cp-1)/cp bytes per rank per layer forward",
       "Liu et al. 2023, Ring Attention, arXiv 2310.01889",
       {{"cp", "GPUs", "1", "context-parallel ranks"},
        {"cp_variant", "", "ring", "ring or allgather"}}},
      {"parallel", "tp_placement: tsp",
       "TSP: tensor and sequence parallelism folded on tp = D ranks; attention in D rounds "
       "(weight shard broadcast, K/V all-gather per head shard, no all-reduce), MLP as a weight "
       "ring; 4 B S h k + 32 h^2 k bytes per rank per layer forward, fewer than TP when B S > 8h",
       "Zyphra 2026, TSP, arXiv 2604.26294",
       {{"tp", "GPUs", "1", "D, the folded degree"}}},
      {"parallel", "tp_placement: vanilla",
       "BOOST's vanilla low-rank TP: each low-rank pair split on its rank r (down column-, up "
       "row-parallel), an all-reduce of [T, d_out] after every pair: 5h + 2f elements per token "
       "per layer forward; needs a model with \"low_rank\"",
       "Wang et al. 2025, BOOST (MLSys 2026), arXiv 2512.12131",
       {{"low_rank", "", "dense",
         "model key: rank, attn_rank and mlp_rank, or rank_ratio; variant svd, cola or lax"}}},
      {"parallel", "tp_placement: btp",
       "BOOST's bottleneck-aware TP: the residual stream sharded over tp, chunks shifted so that "
       "every all-reduce carries r-wide activations (3r QKV, r O, 2r gate+up, r down: 7r elements "
       "per token per layer forward); needs a model with \"low_rank\"",
       "Wang et al. 2025, BOOST (MLSys 2026), arXiv 2512.12131",
       {{"online_rmsnorm", "", "true", "the RMSNorm statistic rides in the next all-reduce"},
        {"linear_grouping", "", "true", "linears sharing an input are one GEMM and one collective"},
        {"lowrank_checkpointing", "", "false",
         "keep the r-wide chunk boundaries, recompute the layer's compute in the backward"}}},
      {"schedule", "gpipe",
       "all forwards, then all backwards; bubble (P-1)/(m+P-1); m activation sets per stage",
       "Huang et al. 2019, GPipe, arXiv 1811.06965",
       {}},
      {"schedule", "1f1b",
       "one forward, one backward, with a flush; same bubble as GPipe; stage s holds at most "
       "P-s activation sets",
       "Narayanan et al. 2021, arXiv 2104.04473 (PipeDream-Flush, arXiv 2006.09503)",
       {}},
      {"schedule", "interleaved-1f1b",
       "v model chunks per stage in Megatron's interleaved order; bubble (P-1)/(v m) of the ideal "
       "time, v times the point-to-point traffic; m a multiple of P",
       "Narayanan et al. 2021, arXiv 2104.04473",
       {{"chunks", "model chunks", "1 (compare: 2)", "v; pp x v must divide the layers"}}},
      {"schedule", "zb-h1",
       "zero bubble, handcrafted: backward split into input gradient B and weight gradient W; "
       "stage s defers up to s W passes into the cool-down; bubble (P-1)(tF+tB-tW), at most P "
       "micro-batches in flight",
       "Qi et al. 2024, Zero Bubble Pipeline Parallelism, arXiv 2401.10241",
       {{"optimizer_post_validation", "", "false", "iterations overlap (see zb-1p)"}}},
      {"schedule", "zb-h2",
       "zero bubble with 2(P-1-s) warm-up forwards and up to 2s deferred W; bubble "
       "(P-1)(tF+tB-2tW), at most 2P-1 micro-batches in flight",
       "Qi et al. 2024, arXiv 2401.10241",
       {{"optimizer_post_validation", "", "false", "iterations overlap (see zb-1p)"}}},
      {"schedule", "zb-1p",
       "zero bubble, automatic: each stage's F/B/W order searched by the paper's heuristic on "
       "the simulated stage and transfer times, activations limited to p micro-batches (1F1B's "
       "memory); with post-validation the next iteration starts on a stage right after its "
       "optimizer step",
       "Qi et al. 2024, arXiv 2401.10241, sec. 3.1 and 4",
       {{"optimizer_post_validation", "", "true",
         "false: a synchronisation before the step separates iterations"}}},
      {"schedule", "zb-2p",
       "zero bubble, automatic, activations limited to 2p micro-batches: near zero bubble for "
       "m >= 2p",
       "Qi et al. 2024, arXiv 2401.10241, sec. 3.1 and 4",
       {{"optimizer_post_validation", "", "true",
         "false: a synchronisation before the step separates iterations"}}},
      {"schedule", "pipedream",
       "asynchronous 1F1B, no flush: backward first, forwards gated at P-s in flight, an "
       "optimizer step after every backward, weight stashing (P-s versions on stage s, P-s-1 "
       "updates crossed)",
       "Narayanan et al. 2019, PipeDream, arXiv 1806.03377", {}},
      {"schedule", "pipedream-2bw",
       "asynchronous, gradients coalesced over m micro-batches, two weight versions, delay one",
       "Narayanan et al. 2021, Memory-Efficient Pipeline-Parallel DNN Training, arXiv 2006.09503",
       {}},
      {"schedule", "paci",
       "asynchronous, no flush and no stashing: backward first, forwards gated at P-s in flight, "
       "each stage steps its own optimizer after every a = m local backwards; at most "
       "ceil((P-s-1)/a) updates crossed per micro-batch",
       "PACI 2026, arXiv 2606.07881 (DistPACI/Workers.py)",
       {{"paci_mode", "", "perf", "perf keeps activations; mem keeps only the stage input and "
                                  "recomputes the stage forward inside the backward"}}},
      {"recompute", "none", "every activation kept for the backward",
       "Korthikanti et al. 2022, arXiv 2205.05198", {}},
      {"recompute", "selective",
       "attention core (softmax, dropout, scores) recomputed inside the backward",
       "Korthikanti et al. 2022, arXiv 2205.05198", {}},
      {"recompute", "full", "only each layer's input kept; the layer's forward rerun in backward",
       "Chen et al. 2016, arXiv 1604.06174", {}},
      {"attention", "unfused",
       "Megatron's core attention: scores and probabilities written to HBM and stored for the "
       "backward (Korthikanti et al.'s activation accounting)",
       "Shoeybi et al. 2019, Megatron-LM, arXiv 1909.08053", {}},
      {"attention", "flash",
       "FlashAttention: one fused causal kernel each way (half the core FLOPs), the backward "
       "recomputes the scores, nothing s^2 stored; needed by cp and tsp",
       "Dao et al. 2022, FlashAttention, arXiv 2205.14135; Dao 2023, arXiv 2307.08691", {}},
      {"optimizer", "shampoo",
       "Distributed Shampoo: L, R factors per block of at most B x B, inverse 4th roots every f "
       "steps (EVD, coupled Newton, Newton-DB, Chebyshev), Adam grafting, blocks spread over "
       "data-parallel ranks and updates all-gathered; one kernel per block and matmul",
       "Shi et al. 2023, arXiv 2309.06497",
       {{"block_size", "", "1024", "max_preconditioner_dim"},
        {"solver", "", "coupled-newton", "evd, coupled-newton, newton-db, chebyshev"}}},
      {"optimizer", "dash",
       "DASH: Shampoo with blocks stacked into 3-D tensors (per layer or per GPU) for batched "
       "kernels, Newton-DB or Chebyshev roots, power-iteration scaling",
       "DASH 2026, arXiv 2602.02016",
       {{"stacking", "", "layer", "layer or gpu"}, {"solver", "", "newton-db", "as shampoo"}}},
      {"optimizer", "adamw",
       "memory-bound step over the parameters a GPU owns: fp32 master weights and two moments "
       "(30 bytes moved per parameter in mixed precision)",
       "Loshchilov & Hutter 2019, arXiv 1711.05101; Micikevicius et al. 2018, arXiv 1710.03740",
       {}},
  };
}

}  // namespace

const std::vector<RegistryEntry>& registry() {
  static const std::vector<RegistryEntry> entries = build_registry();
  return entries;
}

}  // namespace parasim::strat
