#pragma once
// parasim::strat::RankLayout — where each (pipeline stage, data-parallel replica, tensor-parallel
// rank) sits in the cluster, and so which links its groups use.
//
// Order (Megatron-LM's default "tp-dp-pp", tensor parallel innermost):
//   global rank = tp_rank + tp * (dp_rank + dp * stage);   node = global rank / gpus_per_node.
// Tensor-parallel groups are therefore packed inside nodes whenever tp <= gpus_per_node.

#include <vector>

#include "costmodel/collective_cost.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

class RankLayout {
 public:
  RankLayout(const ParallelSpec& parallel, int gpus_per_node)
      : tp_(parallel.tp), dp_(parallel.dp), gpus_per_node_(gpus_per_node) {}

  int rank(int stage, int dp_rank, int tp_rank) const {
    return tp_rank + tp_ * (dp_rank + dp_ * stage);
  }
  int node(int global_rank) const { return global_rank / gpus_per_node_; }

  // The tensor-parallel group of (stage, dp_rank).
  cost::GroupPlacement tp_group(int stage, int dp_rank) const;
  // The data-parallel group of (stage, tp_rank).
  cost::GroupPlacement dp_group(int stage, int tp_rank) const;
  // `count` consecutive replicas from `first` (tp rank 0): a context-parallel group when the
  // layout's dp is dp x cp.
  cost::GroupPlacement replica_block_group(int stage, int first, int count) const;
  // `count` replicas `stride` apart from `first`, of tensor-parallel rank `tp_rank`: a2a+p2p's
  // ring across the all-to-all groups (StepGroup::kContextRing), an HSDP replicate group
  // (FSDP2's shard groups are blocks of `stride` replicas).
  cost::GroupPlacement replica_strided_group(int stage, int first, int count, int stride,
                                             int tp_rank = 0) const;
  // Every stage's tensor-parallel ranks of replica `dp_rank`, `pp` stages: Megatron's
  // model-parallel group.
  cost::GroupPlacement model_parallel_group(int dp_rank, int pp) const;
  // Mixture of experts, Megatron-core's parallel folding (arXiv 2504.14960): the stage's GPUs,
  // numbered locally L = tp_rank + tp * dp_rank (dp_rank over dp x cp), split as
  // L = etp_rank + etp * (ep_rank + ep * edp_rank). The expert-parallel group of (stage, dp_rank,
  // tp_rank): its ep ranks of the same etp and edp rank; the expert tensor-parallel group: its
  // etp consecutive ranks; the expert data-parallel group: the edp ranks holding its experts.
  cost::GroupPlacement expert_parallel_group(int stage, int dp_rank, int tp_rank, int etp,
                                             int ep) const;
  cost::GroupPlacement expert_tensor_group(int stage, int dp_rank, int tp_rank, int etp) const;
  cost::GroupPlacement expert_data_group(int stage, int dp_rank, int tp_rank, int etp,
                                         int ep) const;
  // etp x ep: the ranks of the same edp rank (the allgather dispatcher's group).
  cost::GroupPlacement expert_grid_group(int stage, int dp_rank, int tp_rank, int etp,
                                         int ep) const;
  // The local ranks of those groups, in order (members of a simulated collective).
  std::vector<int> expert_parallel_members(int dp_rank, int tp_rank, int etp, int ep) const;
  std::vector<int> expert_tensor_members(int dp_rank, int tp_rank, int etp) const;
  std::vector<int> expert_data_members(int dp_rank, int tp_rank, int etp, int ep) const;
  std::vector<int> expert_grid_members(int dp_rank, int tp_rank, int etp, int ep) const;
  // The two GPUs of (dp_rank, tp_rank) at stages `a` and `b`: a point-to-point pair.
  cost::GroupPlacement stage_pair(int a, int b, int dp_rank, int tp_rank) const;
  // Whether the pipeline hop from stage `from` to stage `to` of (dp_rank, tp_rank) leaves the node
  // (stages need not be adjacent: interleaving wraps from the last stage to the first).
  cost::LinkClass pipeline_link(int from, int to, int dp_rank, int tp_rank) const;

 private:
  template <typename RankOf>
  cost::GroupPlacement placement(int size, RankOf rank_of) const;
  cost::GroupPlacement local_group(int stage, const std::vector<int>& locals) const;

  int tp_, dp_, gpus_per_node_;  // pp is not needed: a rank's stage is its outermost index
};

}  // namespace parasim::strat
