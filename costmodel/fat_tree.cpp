#include "costmodel/fat_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace parasim::cost {
namespace {

// The parent of rank r in NCCL's first binary tree over n ranks (header); -1 for the root.
int btree_parent(int r, int n) {
  if (r == 0) return -1;
  int b = 1;
  while ((b & r) == 0) b <<= 1;
  const int up = (r ^ b) | (b << 1);
  return up < n ? up : (r ^ b);
}

// The parent of rank r in the second tree: the first mirrored (even n) or shifted by one (odd).
int dtree_parent(int r, int n) {
  if (n % 2 == 1) {
    const int p = btree_parent((r - 1 + n) % n, n);
    return p < 0 ? -1 : (p + 1) % n;
  }
  const int p = btree_parent(n - 1 - r, n);
  return p < 0 ? -1 : n - 1 - p;
}

double tree_crossing_load(int nodes, int per_leaf) {
  std::vector<int> crossing((nodes + per_leaf - 1) / per_leaf, 0);
  for (int r = 0; r < nodes; ++r) {
    for (const int p : {btree_parent(r, nodes), dtree_parent(r, nodes)}) {
      if (p < 0 || r / per_leaf == p / per_leaf) continue;
      ++crossing[static_cast<std::size_t>(r / per_leaf)];
      ++crossing[static_cast<std::size_t>(p / per_leaf)];
    }
  }
  return *std::max_element(crossing.begin(), crossing.end()) / 4.0;
}

}  // namespace

double spine_crossing_load(SpinePattern pattern, int nodes, int nodes_per_leaf) {
  if (nodes < 1 || nodes_per_leaf < 1) {
    throw std::invalid_argument("spine_crossing_load: nodes and nodes_per_leaf must be >= 1");
  }
  if (nodes <= nodes_per_leaf) return 0.0;
  switch (pattern) {
    case SpinePattern::kRing:
      return 1.0;
    case SpinePattern::kTree:
      return tree_crossing_load(nodes, nodes_per_leaf);
    case SpinePattern::kUniform: {
      // A full leaf (m = L) crosses the most: m (N - m) grows with m while m < N / 2, and for
      // m >= N / 2 the last, partial leaf has N - m nodes and the same product.
      const double n = nodes, m = nodes_per_leaf;
      const double last = nodes - nodes_per_leaf * ((nodes - 1) / nodes_per_leaf);
      return std::max(m * (n - m), last * (n - last)) / (n - 1.0);
    }
  }
  return 0.0;
}

double spine_share(SpinePattern pattern, int nodes, const FatTree& network) {
  if (!network.enabled()) return 1.0;
  const double c = spine_crossing_load(pattern, nodes, network.nodes_per_leaf);
  if (!(c > 0)) return 1.0;
  return std::min(1.0, network.nodes_per_leaf / (network.oversubscription * c));
}

SpinePattern spine_pattern(const CollectivePlan& plan) {
  if (plan.kind == CollectiveKind::kAllToAll) return SpinePattern::kUniform;
  if (plan.algorithm == CollectiveAlgorithm::kTree) return SpinePattern::kTree;
  return SpinePattern::kRing;
}

void apply_spine(CollectivePlan& plan, SpinePattern pattern, int nodes,
                 const ClusterSpec& cluster) {
  const double share = spine_share(pattern, nodes, cluster.network);
  if (!(share < 1.0)) return;
  for (CollectivePhase& ph : plan.phases) {
    if (ph.link != LinkClass::kInterNode) continue;
    Bandwidth rate = cluster.inter_node.bandwidth * ph.link_efficiency;
    if (ph.rate_cap.bytes_per_s > 0 && ph.rate_cap.bytes_per_s < rate.bytes_per_s) {
      rate = ph.rate_cap;
    }
    ph.rate_cap = rate * share;
  }
}

}  // namespace parasim::cost
