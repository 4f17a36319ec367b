#include "strategies/workload/rank_layout.hpp"

#include <map>

namespace parasim::strat {

template <typename RankOf>
cost::GroupPlacement RankLayout::placement(int size, RankOf rank_of) const {
  // Count members per node; the collective model takes the (uniform) members per node.
  std::map<int, int> per_node;
  for (int i = 0; i < size; ++i) ++per_node[node(rank_of(i))];
  const int nodes = static_cast<int>(per_node.size());
  return cost::GroupPlacement{size, size / nodes, nodes};
}

cost::GroupPlacement RankLayout::tp_group(int stage, int dp_rank) const {
  return placement(tp_, [&](int i) { return rank(stage, dp_rank, i); });
}

cost::GroupPlacement RankLayout::dp_group(int stage, int tp_rank) const {
  return placement(dp_, [&](int i) { return rank(stage, i, tp_rank); });
}

cost::GroupPlacement RankLayout::replica_block_group(int stage, int first, int count) const {
  return placement(count, [&](int i) { return rank(stage, first + i, 0); });
}

cost::GroupPlacement RankLayout::replica_strided_group(int stage, int first, int count,
                                                       int stride, int tp_rank) const {
  return placement(count, [&](int i) { return rank(stage, first + i * stride, tp_rank); });
}

cost::GroupPlacement RankLayout::model_parallel_group(int dp_rank, int pp) const {
  return placement(tp_ * pp, [&](int i) { return rank(i / tp_, dp_rank, i % tp_); });
}

cost::GroupPlacement RankLayout::local_group(int stage, const std::vector<int>& locals) const {
  const int stage_base = tp_ * dp_ * stage;
  return placement(static_cast<int>(locals.size()),
                   [&](int i) { return stage_base + locals[static_cast<std::size_t>(i)]; });
}

std::vector<int> RankLayout::expert_parallel_members(int dp_rank, int tp_rank, int etp,
                                                     int ep) const {
  const int local = tp_rank + tp_ * dp_rank;
  const int etp_rank = local % etp, edp_rank = local / (etp * ep);
  std::vector<int> out;
  for (int e = 0; e < ep; ++e) out.push_back(etp_rank + etp * (e + ep * edp_rank));
  return out;
}

std::vector<int> RankLayout::expert_tensor_members(int dp_rank, int tp_rank, int etp) const {
  const int local = tp_rank + tp_ * dp_rank;
  std::vector<int> out;
  for (int i = 0; i < etp; ++i) out.push_back(local - local % etp + i);
  return out;
}

std::vector<int> RankLayout::expert_data_members(int dp_rank, int tp_rank, int etp, int ep) const {
  const int local = tp_rank + tp_ * dp_rank;
  const int etp_rank = local % etp, ep_rank = (local / etp) % ep;
  const int edp = tp_ * dp_ / (etp * ep);
  std::vector<int> out;
  for (int i = 0; i < edp; ++i) out.push_back(etp_rank + etp * (ep_rank + ep * i));
  return out;
}

std::vector<int> RankLayout::expert_grid_members(int dp_rank, int tp_rank, int etp, int ep) const {
  const int local = tp_rank + tp_ * dp_rank;
  const int grid = etp * ep, first = local - local % grid;
  std::vector<int> out;
  for (int i = 0; i < grid; ++i) out.push_back(first + i);
  return out;
}

cost::GroupPlacement RankLayout::expert_grid_group(int stage, int dp_rank, int tp_rank, int etp,
                                                   int ep) const {
  return local_group(stage, expert_grid_members(dp_rank, tp_rank, etp, ep));
}

cost::GroupPlacement RankLayout::expert_parallel_group(int stage, int dp_rank, int tp_rank, int etp,
                                                       int ep) const {
  return local_group(stage, expert_parallel_members(dp_rank, tp_rank, etp, ep));
}

cost::GroupPlacement RankLayout::expert_tensor_group(int stage, int dp_rank, int tp_rank,
                                                     int etp) const {
  return local_group(stage, expert_tensor_members(dp_rank, tp_rank, etp));
}

cost::GroupPlacement RankLayout::expert_data_group(int stage, int dp_rank, int tp_rank, int etp,
                                                   int ep) const {
  return local_group(stage, expert_data_members(dp_rank, tp_rank, etp, ep));
}

cost::GroupPlacement RankLayout::stage_pair(int a, int b, int dp_rank, int tp_rank) const {
  return placement(2, [&](int i) { return rank(i == 0 ? a : b, dp_rank, tp_rank); });
}

cost::LinkClass RankLayout::pipeline_link(int from, int to, int dp_rank, int tp_rank) const {
  return node(rank(from, dp_rank, tp_rank)) == node(rank(to, dp_rank, tp_rank))
             ? cost::LinkClass::kIntraNode
             : cost::LinkClass::kInterNode;
}

}  // namespace parasim::strat
