#include "strategies/workload/communicators.hpp"

#include <set>

namespace parasim::strat {

std::vector<cost::GroupPlacement> device_communicators(const Scenario& sc, const RankLayout& layout,
                                                       int stage, int replica, int tp_rank) {
  const auto& p = sc.parallel;
  std::vector<cost::GroupPlacement> out;
  const auto add = [&](const cost::GroupPlacement& g) {
    if (g.size > 1) out.push_back(g);
  };
  add(layout.tp_group(stage, replica));
  add(layout.model_parallel_group(replica, p.pp));
  add(layout.dp_group(stage, tp_rank));
  if (p.cp > 1) add(layout.replica_block_group(stage, replica - replica % p.cp, p.cp));
  if (p.pp > 1) {
    std::set<int> peers;
    if (stage > 0) peers.insert(stage - 1);
    if (stage + 1 < p.pp) peers.insert(stage + 1);
    if (p.chunks > 1 && stage == 0) peers.insert(p.pp - 1);
    if (p.chunks > 1 && stage == p.pp - 1) peers.insert(0);
    for (int peer : peers) add(layout.stage_pair(stage, peer, replica, tp_rank));
    if (sc.model.tied_embeddings && (stage == 0 || stage == p.pp - 1)) {
      add(layout.stage_pair(0, p.pp - 1, replica, tp_rank));
    }
  }
  return out;
}

}  // namespace parasim::strat
