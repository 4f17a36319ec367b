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

cost::GroupPlacement RankLayout::model_parallel_group(int dp_rank, int pp) const {
  return placement(tp_ * pp, [&](int i) { return rank(i / tp_, dp_rank, i % tp_); });
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
